import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

@Suite(.timeLimit(.minutes(5))) struct FileStoreFaultTests {
    /// A small group with a few transactions (puts, an overwrite, a delete) across record kinds.
    static func makeSmallGroup(_ root: String) throws -> [String: String] {
        let store = try FileStore(group: "small", keyProvider: testPassphrase(), root: root)
        try store.commit([put("at-1", "token one"), put("rt-1", "refresh one", kind: .refreshToken)])
        try store.commit([put("at-1", "token one, renewed"), put("acct", "account", kind: .account)])
        try store.commit([delete("rt-1", kind: .refreshToken), put("at-2", "token two")])
        return contents(try store.load().0)
    }

    static let groupFiles = ["header", "log", "state", "lock"]

    /// Opens the group and loads it: the pre-fault contents, or a storeCorrupted error with a
    /// quarantined copy of the damaged file. Anything else (another error, other contents) fails.
    static func checkOutcome(_ root: String, expected: [String: String], fault: String) {
        let quarantine = root + "/small/quarantine"
        do {
            let store = try FileStore(group: "small", keyProvider: testPassphrase(), root: root)
            let loaded = contents(try store.load().0)
            #expect(loaded == expected, "\(fault): loaded different contents")
            // A fresh reader replaying from the start agrees (another code path: tail replay).
            if case .reload(let records, _) = try store.update(since: .start) {
                #expect(contents(records) == expected, "\(fault): update disagrees")
            }
        } catch let error as TokenCacheError {
            #expect(error.code == .storeCorrupted, "\(fault): unexpected \(error)")
            let copies = (try? FileManager.default.contentsOfDirectory(atPath: quarantine)) ?? []
            #expect(!copies.isEmpty, "\(fault): no quarantined copy for \(error)")
            #expect(error.message.contains("quarantine"), "\(fault): message does not say where the copy is")
        } catch {
            Issue.record("\(fault): unexpected error \(error)")
        }
    }

    static func restore(_ root: String, _ pristine: [String: [UInt8]]) {
        for (file, bytes) in pristine { writeBytes(bytes, to: root + "/small/" + file) }
        try? FileManager.default.removeItem(atPath: root + "/small/quarantine")
    }

    @Test(.tags(.slow)) func everySingleByteFlipGivesThePreFaultContentsOrAClearError() throws {
        let tmp = TemporaryDirectory()
        let expected = try Self.makeSmallGroup(tmp.path)
        #expect(expected.count == 3)
        var pristine: [String: [UInt8]] = [:]
        for file in Self.groupFiles { pristine[file] = readBytes(tmp.path + "/small/" + file) }
        var errors = 0
        var intact = 0
        for file in Self.groupFiles {
            let original = pristine[file]!
            for index in original.indices {
                for pattern: UInt8 in [0x01, 0xFF] {
                    var damaged = original
                    damaged[index] ^= pattern
                    writeBytes(damaged, to: tmp.path + "/small/" + file)
                    let before =
                        (try? FileManager.default.contentsOfDirectory(atPath: tmp.path + "/small/quarantine"))?.count ?? 0
                    Self.checkOutcome(tmp.path, expected: expected, fault: "\(file) byte \(index) ^ \(pattern)")
                    let after = (try? FileManager.default.contentsOfDirectory(atPath: tmp.path + "/small/quarantine"))?.count ?? 0
                    if after > before { errors += 1 } else { intact += 1 }
                    Self.restore(tmp.path, pristine)
                }
            }
        }
        // Every byte of the header and of the log is protected; only the generation counter and
        // the lock file's pid are free to change.
        #expect(errors >= 2 * (pristine["header"]!.count + pristine["log"]!.count))
        #expect(intact > 0)
    }

    @Test(.tags(.slow)) func everyTruncationGivesThePreFaultContentsOrAClearError() throws {
        let tmp = TemporaryDirectory()
        let expected = try Self.makeSmallGroup(tmp.path)
        var pristine: [String: [UInt8]] = [:]
        for file in Self.groupFiles { pristine[file] = readBytes(tmp.path + "/small/" + file) }
        for file in Self.groupFiles {
            for length in 0..<pristine[file]!.count {
                writeBytes(Array(pristine[file]![..<length]), to: tmp.path + "/small/" + file)
                Self.checkOutcome(tmp.path, expected: expected, fault: "\(file) cut to \(length) bytes")
                Self.restore(tmp.path, pristine)
            }
        }
    }

    @Test func anAppendTornAtEveryPointIsCutOffOrAdoptedWhole() throws {
        let tmp = TemporaryDirectory()
        let store = try FileStore(group: "small", keyProvider: testPassphrase(), root: tmp.path)
        try store.commit([put("a", "committed")])
        let stateA = readBytes(tmp.path + "/small/state")
        let logA = readBytes(tmp.path + "/small/log")
        let contentsA = contents(try store.load().0)
        try store.commit([put("b", "appended"), delete("a"), put("c", "also appended")])
        let logAB = readBytes(tmp.path + "/small/log")
        let contentsAB = contents(try store.load().0)
        for cut in logA.count...logAB.count {
            // The second transaction's append stopped after `cut` bytes and was never published.
            writeBytes(Array(logAB[..<cut]), to: tmp.path + "/small/log")
            writeBytes(stateA, to: tmp.path + "/small/state")
            let reopened = try FileStore(group: "small", keyProvider: testPassphrase(), root: tmp.path)
            let loaded = contents(try reopened.load().0)
            #expect(loaded == (cut == logAB.count ? contentsAB : contentsA), "cut at \(cut)")
            #expect(readBytes(tmp.path + "/small/log") == (cut == logAB.count ? logAB : logA), "cut at \(cut)")
        }
        #expect(!FileManager.default.fileExists(atPath: tmp.path + "/small/quarantine"))
    }

    @Test func quarantinedCopyIsTheDamagedFileAndTheOriginalStays() throws {
        let tmp = TemporaryDirectory()
        _ = try Self.makeSmallGroup(tmp.path)
        var log = readBytes(tmp.path + "/small/log")
        log[log.count / 2] ^= 0x10
        writeBytes(log, to: tmp.path + "/small/log")
        let store = try FileStore(group: "small", keyProvider: testPassphrase(), root: tmp.path)
        let error = #expect(throws: TokenCacheError.self) { try store.load() }
        #expect(error?.code == .storeCorrupted)
        // The store stays failed (never read as empty), and writes are refused too.
        #expect(throws: TokenCacheError.self) { try store.load() }
        #expect(throws: TokenCacheError.self) { try store.commit([put("x", "y")]) }
        let copies = try FileManager.default.contentsOfDirectory(atPath: tmp.path + "/small/quarantine")
        #expect(copies.count == 1)
        #expect(readBytes(tmp.path + "/small/quarantine/" + copies[0]) == log)
        #expect(readBytes(tmp.path + "/small/log") == log)
    }

    @Test func swappedRecordsAreDetected() throws {
        let tmp = TemporaryDirectory()
        let store = try FileStore(group: "small", keyProvider: testPassphrase(), root: tmp.path)
        try store.commit([put("a", "AAAA")])
        try store.commit([put("b", "BBBB")])
        let log = readBytes(tmp.path + "/small/log")
        // Both transactions have the same shape: swap them whole.
        let body = Array(log[LogFormat.headerByteCount...])
        let half = body.count / 2
        writeBytes(Array(log[..<LogFormat.headerByteCount]) + body[half...] + body[..<half], to: tmp.path + "/small/log")
        let reopened = try FileStore(group: "small", keyProvider: testPassphrase(), root: tmp.path)
        let error = #expect(throws: TokenCacheError.self) { try reopened.load() }
        #expect(error?.code == .storeCorrupted)
    }

    @Test func wrongPassphraseIsWrongKeyNotCorruption() throws {
        let tmp = TemporaryDirectory()
        _ = try Self.makeSmallGroup(tmp.path)
        let error = #expect(throws: TokenCacheError.self) {
            try FileStore(group: "small", keyProvider: testPassphrase("not it"), root: tmp.path)
        }
        #expect(error?.code == .wrongKey)
        #expect(!FileManager.default.fileExists(atPath: tmp.path + "/small/quarantine"))
        let keyFile = try KeyFileKeyProvider(path: tmp.path + "/key")
        let mismatch = #expect(throws: TokenCacheError.self) {
            try FileStore(group: "small", keyProvider: keyFile, root: tmp.path)
        }
        #expect(mismatch?.code == .wrongKey)
    }

    @Test func keyFileIsCreatedPrivateAndCheckedOnEveryOpen() throws {
        let tmp = TemporaryDirectory()
        let path = tmp.path + "/group.key"
        let provider = try KeyFileKeyProvider(path: path)
        let store = try FileStore(group: "k", keyProvider: provider, root: tmp.path)
        #expect(store.storeDescription.protection == .keyFile)
        try store.commit([put("a", "1")])
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(info.st_size == 32)
        #expect(contents(try FileStore(group: "k", keyProvider: provider, root: tmp.path).load().0) == ["1:a": "1"])

        for mode: mode_t in [0o640, 0o604, 0o660] {
            chmod(path, mode)
            let error = #expect(throws: TokenCacheError.self) { try FileStore(group: "k", keyProvider: provider, root: tmp.path) }
            #expect(error?.code == .insecurePermissions, "mode \(String(mode, radix: 8))")
        }
        chmod(path, 0o600)
        if geteuid() == 0 {
            chown(path, 65534, 65534)
            let error = #expect(throws: TokenCacheError.self) { try FileStore(group: "k", keyProvider: provider, root: tmp.path) }
            #expect(error?.code == .insecurePermissions)
            chown(path, 0, 0)
        }
        // Another key file: a wrong key, not corruption.
        let other = try KeyFileKeyProvider(path: tmp.path + "/other.key")
        _ = try other.makeKey(groupID: [], groupName: "x")
        let wrong = #expect(throws: TokenCacheError.self) { try FileStore(group: "k", keyProvider: other, root: tmp.path) }
        #expect(wrong?.code == .wrongKey)
        // Not a key file at all.
        writeBytes([UInt8](repeating: 7, count: 31), to: tmp.path + "/other.key")
        let short = #expect(throws: TokenCacheError.self) { try FileStore(group: "k", keyProvider: other, root: tmp.path) }
        #expect(short?.code == .wrongKey)
        #expect(!FileManager.default.fileExists(atPath: tmp.path + "/k/quarantine"))
    }

    /// A stand-in for the keyring provider: holds group keys by group id, as a Secret Service would.
    final class HeldKeys: KeyProvider, @unchecked Sendable {
        private var keys: [[UInt8]: [UInt8]] = [:]
        private let lock = NSLock()
        var protectionLevel: ProtectionLevel { .keyring }

        func makeKey(groupID: [UInt8], groupName: String) throws -> ProvidedKey {
            let key = try SecretKey()
            // A test double: a real holder never copies key bytes into an array.
            let bytes = key.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) -> [UInt8] in [UInt8](buffer) }
            lock.withLock { keys[groupID] = bytes }
            return ProvidedKey(key: key, source: .keyring)
        }

        func key(for source: HeaderKeySource, groupID: [UInt8], groupName: String) throws -> SecretKey {
            guard case .keyring = source else { throw mismatch(source) }
            guard let bytes = lock.withLock({ keys[groupID] }) else {
                throw TokenCacheError(.wrongKey, "no key held for this group")
            }
            return try SecretKey { destination in bytes.withUnsafeBytes { destination.copyMemory(from: $0) } }
        }
    }

    @Test func keyProviderProtocolFitsAnExternalKeyHolder() throws {
        let tmp = TemporaryDirectory()
        let held = HeldKeys()
        let store = try FileStore(group: "kr", keyProvider: held, root: tmp.path)
        #expect(store.storeDescription.protection == .keyring)
        try store.commit([put("a", "1")])
        #expect(contents(try FileStore(group: "kr", keyProvider: held, root: tmp.path).load().0) == ["1:a": "1"])
        let other = #expect(throws: TokenCacheError.self) { try FileStore(group: "kr", keyProvider: HeldKeys(), root: tmp.path) }
        #expect(other?.code == .wrongKey)
        let passphrase = #expect(throws: TokenCacheError.self) {
            try FileStore(group: "kr", keyProvider: testPassphrase(), root: tmp.path)
        }
        #expect(passphrase?.code == .wrongKey)
    }

    @Test func passphraseFromEnvironment() throws {
        // A private environment: setenv would race with other tests' getenv.
        let environment = { (name: String) -> String? in name == "STC_TEST_PASSPHRASE" ? "from the environment" : nil }
        let tmp = TemporaryDirectory()
        let configuration = CacheConfiguration(store: .file, directory: tmp.path)
        let provider = try CacheConfiguration.KeySource.passphraseFromEnvironment(variable: "STC_TEST_PASSPHRASE")
            .makeProvider(group: "e", configuration: configuration, argon2id: .minimum, environment: environment)
        try FileStore(group: "e", keyProvider: provider, root: tmp.path).commit([put("a", "1")])
        let same = try CacheConfiguration.KeySource.passphrase("from the environment")
            .makeProvider(group: "e", configuration: configuration, argon2id: .minimum)
        #expect(contents(try FileStore(group: "e", keyProvider: same, root: tmp.path).load().0) == ["1:a": "1"])
        let missing = #expect(throws: TokenCacheError.self) {
            try CacheConfiguration.KeySource.passphraseFromEnvironment(variable: "STC_UNSET")
                .makeProvider(group: "e", configuration: configuration, environment: environment)
        }
        #expect(missing?.code == .invalidArgument)
        #expect(!"\(CacheConfiguration.KeySource.passphrase("hunter2"))".contains("hunter2"))
    }

    @Test func insecureOrUnusableGroupDirectoriesAreRefused() throws {
        let tmp = TemporaryDirectory()
        _ = try Self.makeSmallGroup(tmp.path)
        let group = tmp.path + "/small"
        func openError() -> TokenCacheError? {
            #expect(throws: TokenCacheError.self) { try FileStore(group: "small", keyProvider: testPassphrase(), root: tmp.path) }
        }
        symlink(group, tmp.path + "/link")
        let link = #expect(throws: TokenCacheError.self) {
            try FileStore(group: "link", keyProvider: testPassphrase(), root: tmp.path)
        }
        #expect(link?.code == .insecurePermissions)

        for mode: mode_t in [0o770, 0o702, 0o777] {
            chmod(group, mode)
            #expect(openError()?.code == .insecurePermissions, "mode \(String(mode, radix: 8))")
        }
        chmod(group, 0o000)
        let unreadable = openError()
        #expect(unreadable?.code == .ioFailure)
        #expect(unreadable?.message.contains("not readable") == true)
        chmod(group, 0o700)
        if geteuid() == 0 {
            chown(group, 65534, 65534)
            #expect(openError()?.code == .insecurePermissions)
            chown(group, 0, 0)
        }
        chmod(group + "/log", 0o644)
        #expect(openError()?.code == .insecurePermissions)
        chmod(group + "/log", 0o600)
        #expect(contents(try FileStore(group: "small", keyProvider: testPassphrase(), root: tmp.path).load().0).count == 3)

        // A directory that is not a group is never read as an empty one.
        mkdir(tmp.path + "/empty", 0o700)
        let empty = #expect(throws: TokenCacheError.self) {
            try FileStore(group: "empty", keyProvider: testPassphrase(), root: tmp.path)
        }
        #expect(empty?.code == .storeCorrupted)
    }

    @Test(.tags(.multiProcess)) func diskFullRollsBackAndLosesNothing() throws {
        let tmp = TemporaryDirectory()
        let store = try FileStore(group: "full", keyProvider: helperPassphrase, root: tmp.path)
        try store.commit([put("before", "kept")])
        let limit = readBytes(tmp.path + "/full/log").count + 30_000
        let lines = try Helper(["fill", tmp.path, "full", "\(limit)"]).finish()
        let acked = lines.filter { $0.hasPrefix("ack ") }.count
        #expect(acked >= 5)
        #expect(lines.contains { $0.hasPrefix("diskfull") }, "\(lines.suffix(3))")
        #expect(lines.last == "records \(acked + 1)")
        #expect(readBytes(tmp.path + "/full/log").count <= limit)
        // Everything acknowledged is there, nothing else, and the group takes writes again.
        let records = contents(try store.load().0)
        #expect(records.count == acked + 1)
        #expect(records["1:before"] == "kept")
        try store.commit([put("after", "room again")])
        #expect(contents(try FileStore(group: "full", keyProvider: helperPassphrase, root: tmp.path).load().0).count == acked + 2)
    }

    @Test func noFileHoldsATokenUserTenantOrClientId() throws {
        let tmp = TemporaryDirectory()
        let user = "alice.wonderland@contoso.example"
        let tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"
        let client = "04b07795-8ddb-461a-bbee-02f9e1bf7b46"
        let uid = "9f4880d8-80ba-4c40-97bc-f7a23c703084"
        let secret = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.SECRET-TOKEN-BODY"
        let refresh = "0.ARwA-REFRESH-TOKEN-SECRET"
        let home = "\(uid).\(tenant)"
        let store = try FileStore(group: "scan", keyProvider: testPassphrase(), root: tmp.path, compactionMinimumDead: 2)
        var cursor = StoreCursor.start
        for round in 0..<6 {
            cursor = try store.transact(since: cursor) { _ in
                [
                    put(
                        "\(home)-login.microsoftonline.com-accesstoken-\(client)-\(tenant)-user.read",
                        #"{"secret":"\#(secret)\#(round)","username":"\#(user)"}"#),
                    put(
                        "\(home)-login.microsoftonline.com-refreshtoken-\(client)--", #"{"secret":"\#(refresh)"}"#,
                        kind: .refreshToken),
                    put(
                        "\(home)-login.microsoftonline.com-\(tenant)", #"{"username":"\#(user)","realm":"\#(tenant)"}"#,
                        kind: .account),
                ]
            }
        }
        #expect(cursor.epoch > 1, "compaction ran, so its files are covered too")
        // Damage the log so a quarantined copy exists and gets scanned as well.
        var log = readBytes(tmp.path + "/scan/log")
        log[log.count - 3] ^= 1
        writeBytes(log, to: tmp.path + "/scan/log")
        _ = try? FileStore(group: "scan", keyProvider: testPassphrase(), root: tmp.path).load()
        let files = allFiles(under: tmp.path + "/scan")
        #expect(files.contains { $0.contains("/quarantine/") })
        let needles = [
            user, "alice", "contoso", tenant, client, uid, secret, "SECRET", refresh, "REFRESH", "accesstoken",
            "login.microsoftonline",
        ]
        for file in files {
            let bytes = readBytes(file)
            for needle in needles {
                #expect(!contains(bytes, Array(needle.utf8)), "\(file) contains \(needle)")
                #expect(!contains(bytes, Array(needle.lowercased().utf8)), "\(file) contains \(needle)")
            }
        }
    }
}
