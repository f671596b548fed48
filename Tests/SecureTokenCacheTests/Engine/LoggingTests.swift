import Foundation
import Glibc
import Logging
import TestSupport
import Testing

@testable import SecureTokenCache

/// What the library logs for an operator (the store chosen and why, damage and quarantine,
/// compaction, a long lock wait, a refresh and its outcome), and that no message or metadata
/// ever holds a token, a secret, a fingerprint of one, or a user name.
@Suite(.timeLimit(.minutes(2))) struct LoggingTests {
    /// Whether any entry's message or metadata contains one of `forbidden`.
    static func leaks(_ log: CapturedLog, _ forbidden: [String]) -> [String] {
        log.messages.flatMap { entry in
            forbidden.filter { !$0.isEmpty && entry.text.contains($0) }.map { "\($0) in \(entry.text)" }
        }
    }

    @Test func theStoreChoiceCompactionDamageAndALongLockWaitAreLogged() throws {
        let log = CapturedLog()
        let folder = TemporaryDirectory()
        let configuration = CacheConfiguration(
            store: .file, directory: folder.path, keySource: .keyFile(path: folder.path + "/key"), logger: log.logger)
        let group = try CacheGroup.open("com.example.logging", configuration: configuration)
        #expect(
            log.messages.contains {
                $0.level == .info && $0.message.contains("opened group com.example.logging in the file store")
            })

        // Compaction, on a store that compacts early.
        let store = try FileStore(
            group: "compacting", keyProvider: testPassphrase(), root: folder.path, compactionMinimumDead: 4, logger: log.logger)
        var cursor = StoreCursor.start
        for round in 0..<12 { cursor = try store.transact(since: cursor) { _ in [put("same", "secret-\(round)")] } }
        #expect(log.messages.contains { $0.message.contains("compacted the log of group compacting") })

        // A lock held for longer than a second by another thread.
        let lock = FileLock(path: folder.path + "/held.lock", purpose: "the group held", logger: log.logger)
        let held = DispatchSemaphore(value: 0)
        let holder = Thread {
            try? lock.withLock(timeout: .seconds(5)) {
                held.signal()
                usleep(1_300_000)
            }
        }
        holder.start()
        held.wait()
        try lock.withLock(timeout: .seconds(5)) {}
        #expect(
            log.messages.contains { $0.level == .notice && $0.message.contains("for the group held, held by pid \(getpid())") })

        // Damage: the header of the group is overwritten.
        let header = folder.path + "/com.example.logging/header"
        let fd = open(header, O_WRONLY)
        #expect(pwrite(fd, "XXXXXXXX", 8, 0) == 8)
        close(fd)
        _ = group
        #expect(throws: TokenCacheError.self) { try CacheGroup.open("com.example.logging", configuration: configuration) }
        let damage = log.messages.first { $0.level == .error && $0.message.contains("is damaged") }
        #expect(damage?.metadata["quarantine"].map { "\($0)".contains("/quarantine/header.") } == true)

        #expect(Self.leaks(log, (0..<12).map { "secret-\($0)" }).isEmpty)
    }

    @Test func aRefreshAndItsOutcomeAreLoggedWithoutTokenOrUser() async throws {
        let log = CapturedLog()
        let world = try SilentWorld(logger: log.logger)
        let authority = try FakeAuthority()
        let account = try await authority.signIn(world.a)
        let result = try await world.b.acquireTokenSilently(
            scopes: ["User.Read"], account: account, authority: try authority.authority())
        #expect(!result.isFromCache)
        let refresh = log.messages.filter { $0.message.contains("refresh") }
        #expect(refresh.map(\.message) == ["redeeming a refresh token", "the refresh succeeded"])
        #expect(refresh.allSatisfy { $0.metadata["client"] == "\(Fixtures.clientB)" && $0.metadata["refreshToken"] == "family" })

        // A refused refresh token is logged with the server's error, not the token.
        try await authority.control(["mode": "invalid_grant"])
        _ = await SilentWorld.error {
            try await world.b.acquireTokenSilently(
                scopes: ["Mail.Read"], account: account, authority: try authority.authority(), forceRefresh: true)
        }
        #expect(log.messages.contains { $0.level == .notice && $0.message.contains("refused the refresh token: invalid_grant") })

        let secrets = try world.group.index().entries.values.compactMap { stored -> String? in
            switch stored.entry {
            case .accessToken(let token): token.secret
            case .refreshToken(let token): token.secret
            case .idToken(let token): token.secret
            default: nil
            }
        }
        #expect(!secrets.isEmpty)
        let forbidden =
            secrets + secrets.map(SecretFingerprint.of) + [
                result.accessToken, account.username, account.homeAccountId.normalised, "alice",
            ]
        #expect(Self.leaks(log, forbidden).isEmpty, "\(Self.leaks(log, forbidden))")
    }
}
