import Foundation
import Logging
import TestSupport
import Testing

@testable import SecureTokenCache
@testable import stc_testhelper

/// The proofs against the real peers, written once for both kinds of shared cache: msal-python
/// 1.39.0 with msal-extensions 1.3.1 (`PersistedTokenCache` over `FilePersistence`, as Azure CLI
/// keeps its cache, or over `LibsecretPersistence` on the azure-identity item) in processes of
/// their own, with each of the locks msal-extensions may take, and writers of ours in processes
/// of their own (`PeerWriter`, and `stc-testhelper shared-churn` for the ones
/// killed). `SharedCachePeerTests` runs them on a file;
/// `KeyringTests.SharedKeyringPeers` on the item, inside the private keyring.
struct SharedPeerProofs {
    /// Where the document is kept.
    enum Medium: Sendable {
        /// A plaintext file, as Azure CLI keeps it.
        case file
        /// The azure-identity keyring item (schema `msal.cache.nocae`, attribute
        /// `MsalClientID=Microsoft.Developer.IdentityService`, raw JSON), with its signal file.
        case keyring
    }

    let medium: Medium
    let folder = TemporaryDirectory()

    /// The document's path, or the keyring item's signal file: either way msal-extensions locks
    /// it with this path and `.lockfile`.
    var path: String {
        switch medium {
        case .file: folder.path + "/azure/msal_token_cache.json"
        case .keyring: folder.path + "/IdentityService/msal.cache.nocae"
        }
    }

    /// The azure-identity item with its signal file at ``path``.
    var keyringItem: MSALSharedCache.KeyringItem {
        get throws {
            guard case .keyring(var item) = try MSALSharedCache.azureIdentity().location else {
                throw MSALPython.Failure(description: "the azure-identity preset is not a keyring item")
            }
            item.signalFile = path
            return item
        }
    }

    var sharedCache: MSALSharedCache {
        get throws {
            switch medium {
            case .file: .file(path: path)
            case .keyring: .keyring(try keyringItem)
            }
        }
    }

    /// The keyring item's client, as libsecret finds the item.
    func keyringClient() throws -> (client: KeyringClient, attributes: [String: String]) {
        let item = try keyringItem
        let schema = KeyringSchema(
            name: item.schema, attributes: Array(item.attributes.keys), matchesName: item.matchesSchemaName)
        return (KeyringClient(schema: schema, collection: item.collection), item.attributes)
    }

    /// The proofs on `medium`, starting with no document: the keyring item is one every test of
    /// the kind shares, so whatever an earlier test left in it is removed.
    init(_ medium: Medium) throws {
        self.medium = medium
        if medium == .keyring {
            let (client, attributes) = try keyringClient()
            _ = try client.clear(attributes: attributes)
        }
    }

    /// What `msal_ext_peer.py` and `PeerCompare` need before their command for this medium.
    var peerOptions: [String] { medium == .keyring ? ["--keyring"] : [] }
    /// What `stc-testhelper` needs before its command for this medium.
    var helperOptions: [String] { medium == .keyring ? ["--store", "keyring"] : [] }

    func open(lockTimeout: Duration = .seconds(30), logger: Logger = .discarding) throws -> CacheGroup {
        var configuration = CacheConfiguration(sharedCache: try sharedCache, lockTimeout: lockTimeout, logger: logger)
        // Where stc-testhelper keeps it too: every process of a test shares the refresh locks.
        configuration.directory = SystemCall.parentDirectory(of: path) + "/stc"
        return try CacheGroup.open("shared", configuration: configuration)
    }

    /// The document as it is kept: the file's bytes, or the item's text.
    func storedDocument() throws -> [UInt8] {
        switch medium {
        case .file:
            return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        case .keyring:
            let (client, attributes) = try keyringClient()
            guard let text = try client.withSecret(attributes: attributes, { Array($0) }) else {
                throw MSALPython.Failure(description: "there is no keyring item")
            }
            return text
        }
    }

    /// The access tokens' scopes in the document as it is kept, read raw: it must parse.
    func scopesInDocument() throws -> Set<String> {
        guard case .object(let document) = try JSONParser.parse(try storedDocument()),
            case .object(let tokens)? = document["AccessToken"]
        else {
            throw MSALPython.Failure(description: "the document has no AccessToken section")
        }
        return Set(
            tokens.compactMap { _, entry in
                if case .object(let fields) = entry, case .string(let target)? = fields["target"] { target } else { nil }
            })
    }

    struct SilentAnswer: Decodable {
        var secret: String?
        var network_calls: Int
    }

    func silent(_ answer: String) throws -> SilentAnswer { try JSONDecoder().decode(SilentAnswer.self, from: Data(answer.utf8)) }

    /// Starts `msal_ext_peer.py` on this medium with `lock`, and waits until it is ready.
    /// msal-extensions' `LibsecretPersistence` makes a trial run on a fixed item of its own as it
    /// starts (store, read back, delete), which fails when another process makes its own at the
    /// same moment: so peers start one after the other.
    func startPeer(_ lock: ExtensionsLock, _ arguments: [String]) throws -> PeerProcess {
        let peer = try lock.start(peerOptions + arguments)
        try peer.expect("ready")
        return peer
    }

    // MARK: - The proofs

    func ourTokenIsASilentHitForMsalPythonAndTheReverse(lock: ExtensionsLock) throws {
        let peer = try SharedPeerAccount(lock)
        let cache = try TokenCache(clientId: peer.clientId, group: open())
        try cache.store(peer.response(scope: "Ours.Read", secret: "at-ours"), for: peer.request(scope: "Ours.Read"))

        let theirs = try silent(lock.run(peerOptions + ["silent", path, "Ours.Read"]))
        #expect(theirs.secret == "at-ours")
        #expect(theirs.network_calls == 0)

        let python = try startPeer(lock, ["serve", path])
        defer { python.end() }
        #expect(try python.ask("add Python.Read at-python") == "ok")
        // A group opened after the write, and the one open during it.
        for reader in [try TokenCache(clientId: peer.clientId, group: open()), cache] {
            let account = try #require(try reader.account(username: peer.username))
            #expect(try reader.accessToken(for: ["Python.Read"], account: account)?.token.secret == "at-python")
            #expect(try reader.accessToken(for: ["Ours.Read"], account: account)?.token.secret == "at-ours")
        }
    }

    func eachSideSeesTheOthersWriteAtItsNextAccess(lock: ExtensionsLock) throws {
        let peer = try SharedPeerAccount(lock)
        let cache = try TokenCache(clientId: peer.clientId, group: open())
        let python = try startPeer(lock, ["serve", path])
        defer { python.end() }
        for round in 0..<20 {
            // No pause between a write and the other side's access: the next access sees it.
            #expect(try python.ask("add Python.\(round) at-python-\(round)") == "ok")
            let account = try #require(try cache.account(username: peer.username))
            #expect(try cache.accessToken(for: ["Python.\(round)"], account: account)?.token.secret == "at-python-\(round)")
            try cache.store(
                peer.response(scope: "Ours.\(round)", secret: "at-ours-\(round)"), for: peer.request(scope: "Ours.\(round)"))
            let theirs = try silent(python.ask("silent Ours.\(round)"))
            #expect(theirs.secret == "at-ours-\(round)", "round \(round)")
            #expect(theirs.network_calls == 0)
        }
    }

    func fourWritersInEachLanguageLoseNothingAndNoReaderSeesHalfADocument(lock: ExtensionsLock) throws {
        let peer = try SharedPeerAccount(lock)
        // Our writers are release builds, as apps are: a debug build rewrites a document of
        // hundreds of tokens many times slower, and would hold the lock file long enough to
        // starve msal-extensions' writers on its own. scripts/test builds it.
        let writer = PackageRoot.url.appendingPathComponent("Benchmarks/.build/release/PeerWriter").path
        try #require(
            FileManager.default.isExecutableFile(atPath: writer),
            "\(writer) is missing: run scripts/test, or swift build -c release --package-path Benchmarks --product PeerWriter")
        // Each writer's writes; STC_PEER_WRITES sets more for a longer proof than the suite's (its
        // length grows with them: the writers pause between writes).
        let writes = ProcessInfo.processInfo.environment["STC_PEER_WRITES"].flatMap { Int($0) } ?? 30
        // Up to this long between two writes of one writer, as between an app's token requests.
        // Faster, the eight writers together ask for the lock file more than it can be free, and
        // msal-extensions, which looks for a free moment every 250 ms, waits out its 5 s: it then
        // gives up (without portalocker) or goes on without the lock file (with portalocker),
        // which loses writes even among msal-extensions processes alone. msal-extensions holds
        // the lock through a whole keyring write, which gnome-keyring makes slow when the machine
        // is busy: on the keyring the writers pause longer, so that its own writers alone do not
        // fill the lock file's time.
        let pauseMilliseconds = medium == .keyring ? "3000" : "2000"
        var writers: [(prefix: String, process: PeerProcess)] = []
        defer { for writer in writers { writer.process.end() } }
        for index in 0..<4 {
            writers.append(("py\(index)", try startPeer(lock, ["write", path, "py\(index)", String(writes), pauseMilliseconds])))
            let ours = try PeerProcess(
                writer, peerOptions + [path, peer.json, "ours\(index)", String(writes), pauseMilliseconds])
            try ours.expect("ready")
            writers.append(("ours\(index)", ours))
        }
        // A reader of ours in this process too, looking up all along: it must never throw, even
        // while msal-extensions rewrites the document (a file in place). A millisecond between
        // rounds, as an app's lookups come, rather than a loop that keeps a core busy: the
        // writers, not the reader, must have the machine (CI builds the sanitizer passes at the
        // lowest priority meanwhile).
        let reader = try TokenCache(clientId: peer.clientId, group: open())
        for writer in writers { writer.process.send("go") }
        var lookups = 0
        var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
        while writers.contains(where: { $0.process.process.isRunning }) {
            if let account = try reader.account(username: peer.username) {
                _ = try reader.accessToken(for: ["py0-0"], account: account)
            }
            _ = try reader.accounts()
            lookups += 1
            nanosleep(&pause, nil)
        }
        #expect(lookups > 0)
        var lockErrors = 0
        var staleViews = 0
        for writer in writers {
            let (lines, status) = writer.process.finish()
            #expect(status == 0 && lines.filter { $0.hasPrefix("ack ") }.count == writes, "\(writer.prefix): \(lines.suffix(3))")
            lockErrors += lines.filter { $0.hasPrefix("lock-error ") }.count
            staleViews += lines.filter { $0.hasPrefix("stale-empty-view ") }.count
            // Past that, msal-extensions' lock excludes nobody: whatever is lost then is not ours
            // to find, and waits that long mean our writers starve it.
            #expect(!lines.contains("lock-fallback"), "\(writer.prefix) waited 5 s and went on without the lock file")
        }
        print(
            "SharedPeerProofs: \(medium), \(lock.rawValue): \(lookups) lookups here; msal-extensions gave up on \(lockErrors) writes; its own readers saw a file it was rewriting in place as empty \(staleViews) times"
        )
        let expected = Set(writers.flatMap { writer in (0..<writes).map { "\(writer.prefix)-\($0)" } })
        let missing = expected.subtracting(try scopesInDocument())
        #expect(missing.isEmpty, "lost writes: \(missing.sorted().prefix(20))")
        // And the engine finds each one, with its secret.
        let fresh = try TokenCache(clientId: peer.clientId, group: open())
        let account = try #require(try fresh.account(username: peer.username))
        let wrong = try expected.sorted().filter {
            try fresh.accessToken(for: [$0], account: account)?.token.secret != "secret-" + $0
        }
        #expect(wrong.isEmpty, "not found by the engine: \(wrong.prefix(20))")
    }

    /// 100 writers of ours, each killed with SIGKILL at a random moment up to `window` after its
    /// first write: `window` spans at least one whole write on the medium. Some of the kills land
    /// while the writer holds the lock file, which then names the dead writer; the next write
    /// takes it over.
    func aWriterKilledMidWriteLeavesEveryAcknowledgedWriteAndItsLockIsTakenOver(window: Duration) throws {
        let rounds = 100
        let peer = try SharedPeerAccount(.filelock)
        let helper = try #require(testHelperPath, "stc-testhelper not found next to the tests")
        let log = CapturedLog()
        let cache = try TokenCache(clientId: peer.clientId, group: open(logger: log.logger))
        let lockFile = path + ".lockfile"
        var killedHoldingTheLock = 0
        var acknowledged: Set<String> = []
        var random = SystemRandomNumberGenerator()
        for round in 0..<rounds {
            let writer = try PeerProcess(helper, helperOptions + ["shared-churn", path, peer.json, "k\(round)"])
            defer { writer.end() }
            try writer.expect("ready")
            writer.send("go")
            try writer.expect("ack 0")
            acknowledged.insert("k\(round)-0")
            // A random moment of the next writes: in the lock, the write or between.
            var pause = timespec(duration: window * Double.random(in: 0..<1, using: &random))
            nanosleep(&pause, nil)
            kill(writer.pid, SIGKILL)
            let (lines, _) = writer.finish()
            for line in lines where line.hasPrefix("ack ") { acknowledged.insert("k\(round)-\(line.dropFirst(4))") }
            let missing = acknowledged.subtracting(try scopesInDocument())
            #expect(missing.isEmpty, "round \(round): acknowledged and gone: \(missing.sorted())")
            if SharedCacheLock.holder(at: lockFile) == writer.pid { killedHoldingTheLock += 1 }
            // The dead writer's lock file is taken over at once: msal-extensions gives up after
            // about five seconds, and this write must not wait for anything like it.
            let start = ContinuousClock.now
            try cache.store(
                peer.response(scope: "after-\(round)", secret: "at-after-\(round)"), for: peer.request(scope: "after-\(round)"))
            #expect(ContinuousClock.now - start < .seconds(2), "round \(round): the write waited for the dead writer's lock")
            #expect(!FileManager.default.fileExists(atPath: lockFile), "round \(round): the lock file stays after the write")
            acknowledged.insert("after-\(round)")
        }
        #expect(try scopesInDocument().isSuperset(of: acknowledged))
        // Kills that left the lock file naming the dead writer, each taken over by the next write.
        let takeOvers = log.messages.filter { $0.message.hasPrefix("taking over the shared cache's lock file") }.count
        print(
            "SharedPeerProofs: \(medium): \(killedHoldingTheLock) of \(rounds) kills landed while the writer held the lock file")
        #expect(killedHoldingTheLock > 0, "no kill landed while the writer held the lock file")
        #expect(takeOvers == killedHoldingTheLock)
        // Nothing a killed writer left behind stays beside the document.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: SystemCall.parentDirectory(of: path)).filter {
            $0.contains(".stc-")
        }
        #expect(leftovers.isEmpty, "\(leftovers)")
        // And msal-extensions, with either lock, writes and reads the document after it all.
        for lock in ExtensionsLock.allCases {
            let python = try startPeer(lock, ["serve", path])
            defer { python.end() }
            #expect(try python.ask("add After.\(lock) at-after-\(lock)") == "ok")
            #expect(try silent(python.ask("silent after-\(rounds - 1)")).secret == "at-after-\(rounds - 1)")
        }
    }

    func aLockHeldByAStoppedPeerTimesOutOurWriteNamingItsPidAndLookupsGoOn(lock: ExtensionsLock) throws {
        let peer = try SharedPeerAccount(lock)
        let cache = try TokenCache(clientId: peer.clientId, group: open(lockTimeout: .milliseconds(500)))
        try cache.store(peer.response(scope: "Before.Read", secret: "at-before"), for: peer.request(scope: "Before.Read"))
        let holder = try lock.start(peerOptions + ["hold-lock", path])
        defer { holder.end() }
        let held = try holder.expect("held ")
        #expect(held == "held \(holder.pid)")
        kill(holder.pid, SIGSTOP)
        do {
            try cache.store(peer.response(scope: "During.Read", secret: "at-during"), for: peer.request(scope: "During.Read"))
            Issue.record("the write did not wait for the stopped peer's lock")
        } catch let error as TokenCacheError {
            #expect(error.code == .lockTimeout)
            #expect(error.message.contains("process \(holder.pid)"), "\(error.message)")
        }
        let account = try #require(try cache.account(username: peer.username))
        #expect(try cache.accessToken(for: ["Before.Read"], account: account)?.token.secret == "at-before")
        // Continued, the peer releases its lock when its input closes, and the write goes through.
        kill(holder.pid, SIGCONT)
        #expect(holder.finish().status == 0)
        try cache.store(peer.response(scope: "After.Read", secret: "at-after"), for: peer.request(scope: "After.Read"))
        #expect(try scopesInDocument().isSuperset(of: ["Before.Read", "After.Read"]))
        #expect(!FileManager.default.fileExists(atPath: path + ".lockfile"))
    }
}
