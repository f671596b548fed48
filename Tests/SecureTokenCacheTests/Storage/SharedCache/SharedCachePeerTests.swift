import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

/// The msal-file store against its real peers: msal-python 1.39.0 with msal-extensions 1.3.1
/// (`PersistedTokenCache` over `FilePersistence`, as Azure CLI keeps its cache) in processes of
/// their own, with each of the locks msal-extensions may take, and writers of ours in processes
/// of their own (`stc-testhelper shared-write`).
@Suite(.serialized, .tags(.multiProcess), .timeLimit(.minutes(5))) struct SharedCachePeerTests {
    let folder = TemporaryDirectory()
    var path: String { folder.path + "/azure/msal_token_cache.json" }

    func open(lockTimeout: Duration = .seconds(30)) throws -> CacheGroup {
        var configuration = CacheConfiguration(sharedCache: .file(path: path), lockTimeout: lockTimeout)
        // Where stc-testhelper keeps it too: every process of a test shares the refresh locks.
        configuration.directory = folder.path + "/azure/stc"
        return try CacheGroup.open("shared", configuration: configuration)
    }

    /// The access tokens' scopes in the document at the path, read raw: it must parse.
    func scopesInDocument() throws -> Set<String> {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        guard case .object(let document) = try JSONParser.parse(bytes), case .object(let tokens)? = document["AccessToken"] else {
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

    @Test(arguments: ExtensionsLock.allCases) func eachEnvironmentLocksAsItsNameSays(lock: ExtensionsLock) throws {
        #expect(try lock.run(["lock-kind"]).trimmingCharacters(in: .whitespacesAndNewlines) == lock.rawValue)
    }

    @Test(arguments: ExtensionsLock.allCases) func ourTokenIsASilentHitForMsalPythonAndTheReverse(lock: ExtensionsLock) throws {
        let peer = try SharedPeerAccount(lock)
        let cache = try TokenCache(clientId: peer.clientId, group: open())
        try cache.store(peer.response(scope: "Ours.Read", secret: "at-ours"), for: peer.request(scope: "Ours.Read"))

        let theirs = try silent(lock.run(["silent", path, "Ours.Read"]))
        #expect(theirs.secret == "at-ours")
        #expect(theirs.network_calls == 0)

        let python = try lock.start(["serve", path])
        defer { python.end() }
        try python.expect("ready")
        #expect(try python.ask("add Python.Read at-python") == "ok")
        // A group opened after the write, and the one open during it.
        for reader in [try TokenCache(clientId: peer.clientId, group: open()), cache] {
            let account = try #require(try reader.account(username: peer.username))
            #expect(try reader.accessToken(for: ["Python.Read"], account: account)?.token.secret == "at-python")
            #expect(try reader.accessToken(for: ["Ours.Read"], account: account)?.token.secret == "at-ours")
        }
    }

    @Test(arguments: ExtensionsLock.allCases) func eachSideSeesTheOthersWriteAtItsNextAccess(lock: ExtensionsLock) throws {
        let peer = try SharedPeerAccount(lock)
        let cache = try TokenCache(clientId: peer.clientId, group: open())
        let python = try lock.start(["serve", path])
        defer { python.end() }
        try python.expect("ready")
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

    @Test(.tags(.slow), arguments: ExtensionsLock.allCases) func fourWritersInEachLanguageLoseNothingAndNoReaderSeesHalfADocument(
        lock: ExtensionsLock
    ) throws {
        let peer = try SharedPeerAccount(lock)
        // Our writers are release builds, as apps are: a debug build rewrites a document of
        // hundreds of tokens many times slower, and would hold the lock file long enough to
        // starve msal-extensions' writers on its own. scripts/test builds it.
        let helper = PackageRoot.url.appendingPathComponent("Benchmarks/.build/release/PeerCompare").path
        try #require(
            FileManager.default.isExecutableFile(atPath: helper),
            "\(helper) is missing: run scripts/test, or swift build -c release --package-path Benchmarks --product PeerCompare")
        let writes = 100
        // Up to this long between two writes of one writer, as between an app's token requests.
        // Faster, the eight writers together ask for the lock file more than it can be free, and
        // msal-extensions, which looks for a free moment every 250 ms, waits out its 5 s: it then
        // gives up (without portalocker) or goes on without the lock file (with portalocker),
        // which loses writes even among msal-extensions processes alone.
        let pauseMilliseconds = "2000"
        var writers: [(prefix: String, process: PeerProcess)] = []
        defer { for writer in writers { writer.process.end() } }
        for index in 0..<4 {
            writers.append(("py\(index)", try lock.start(["write", path, "py\(index)", String(writes), pauseMilliseconds])))
            writers.append(
                (
                    "ours\(index)",
                    try PeerProcess(helper, ["shared-write", path, peer.json, "ours\(index)", String(writes), pauseMilliseconds])
                ))
        }
        for writer in writers { try writer.process.expect("ready") }
        // A reader of ours in this process too, looking up all along: it must never throw, even
        // while msal-extensions rewrites the file in place.
        let reader = try TokenCache(clientId: peer.clientId, group: open())
        for writer in writers { writer.process.send("go") }
        var lookups = 0
        while writers.contains(where: { $0.process.process.isRunning }) {
            if let account = try reader.account(username: peer.username) {
                _ = try reader.accessToken(for: ["py0-0"], account: account)
            }
            _ = try reader.accounts()
            lookups += 1
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
            "SharedCachePeerTests: \(lock.rawValue): \(lookups) lookups here; msal-extensions gave up on \(lockErrors) writes; its own readers saw a file it was rewriting in place as empty \(staleViews) times"
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

    @Test(.tags(.slow)) func aWriterKilledMidWriteLeavesEveryAcknowledgedWriteAndItsLockIsTakenOver() throws {
        let peer = try SharedPeerAccount(.filelock)
        let helper = try #require(testHelperPath, "stc-testhelper not found next to the tests")
        let cache = try TokenCache(clientId: peer.clientId, group: open())
        var acknowledged: Set<String> = []
        var random = SystemRandomNumberGenerator()
        for round in 0..<100 {
            let writer = try PeerProcess(helper, ["shared-churn", path, peer.json, "k\(round)"])
            defer { writer.end() }
            try writer.expect("ready")
            writer.send("go")
            try writer.expect("ack 0")
            acknowledged.insert("k\(round)-0")
            // A random moment of the next writes: in the lock, the write, the rename or between.
            var pause = timespec(tv_sec: 0, tv_nsec: Int.random(in: 0..<15_000_000, using: &random))
            nanosleep(&pause, nil)
            kill(writer.pid, SIGKILL)
            let (lines, _) = writer.finish()
            for line in lines where line.hasPrefix("ack ") { acknowledged.insert("k\(round)-\(line.dropFirst(4))") }
            let missing = acknowledged.subtracting(try scopesInDocument())
            #expect(missing.isEmpty, "round \(round): acknowledged and gone: \(missing.sorted())")
            // The dead writer's lock file is taken over at once: msal-extensions gives up after
            // about five seconds, and this write must not wait for anything like it.
            let start = ContinuousClock.now
            try cache.store(
                peer.response(scope: "after-\(round)", secret: "at-after-\(round)"), for: peer.request(scope: "after-\(round)"))
            #expect(ContinuousClock.now - start < .seconds(2), "round \(round): the write waited for the dead writer's lock")
            acknowledged.insert("after-\(round)")
        }
        #expect(try scopesInDocument().isSuperset(of: acknowledged))
        // Nothing a killed writer left behind stays beside the document.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path + "/azure").filter {
            $0.contains(".stc-")
        }
        #expect(leftovers.isEmpty, "\(leftovers)")
        // And msal-extensions, with either lock, writes and reads the document after it all.
        for lock in ExtensionsLock.allCases {
            let python = try lock.start(["serve", path])
            defer { python.end() }
            try python.expect("ready")
            #expect(try python.ask("add After.\(lock) at-after-\(lock)") == "ok")
            #expect(try silent(python.ask("silent after-99")).secret == "at-after-99")
        }
    }

    @Test(arguments: ExtensionsLock.allCases) func aLockHeldByAStoppedPeerTimesOutOurWriteNamingItsPidAndLookupsGoOn(
        lock: ExtensionsLock
    ) throws {
        let peer = try SharedPeerAccount(lock)
        let cache = try TokenCache(clientId: peer.clientId, group: open(lockTimeout: .milliseconds(500)))
        try cache.store(peer.response(scope: "Before.Read", secret: "at-before"), for: peer.request(scope: "Before.Read"))
        let holder = try lock.start(["hold-lock", path])
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
