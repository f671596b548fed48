#if canImport(SecureTokenCachePostgres)
    import Foundation
    import Glibc
    import Synchronization
    import TestSupport
    import Testing

    @testable import SecureTokenCache
    @testable import SecureTokenCachePostgres

    /// When the database does not answer: lookups of what an instance holds are served, no call
    /// waits past the timeout, and writes follow ``CacheConfiguration/DatabaseOutagePolicy``
    /// (kept in memory and committed when the database answers again, or refused).
    @Suite(
        .serialized,
        .tags(.postgres, .slow),
        .timeLimit(.minutes(3)),
        .enabled(if: PostgresTestSupport.required, "needs the server of scripts/postgres (STC_POSTGRES_REQUIRED=1)")
    )
    struct PostgresOutageTests {
        typealias Support = PostgresTestSupport
        typealias Level = PostgresFirstLevelTests

        static func configuration(_ policy: CacheConfiguration.DatabaseOutagePolicy) -> CacheConfiguration {
            var configuration = Level.configuration(memoryLimit: nil)
            configuration.whenDatabaseUnavailable = policy
            return configuration
        }

        /// A database client of its own (its own pool and listener: the server stops under it, and
        /// no other suite's client may be left thinking the database is down), with a short timeout.
        static func database(timeout: Duration = .seconds(2), socket: Bool = false) throws -> PostgresRowDatabase {
            var configuration = try PostgresStoreConfiguration(url: socket ? Support.socketURL() : Support.tcpURL())
            configuration.timeout = timeout
            configuration.maximumConnections =
                20
                + clients.withLock { count in
                    count += 1
                    return count
                }
            return try PostgresRowDatabase.shared(configuration, logger: .discarding)
        }

        private static let clients = Mutex(0)

        /// Stops the private server, runs `body`, and starts it again.
        static func withServerStopped(_ body: () async throws -> Void) async throws {
            let listening = try Support.sharedListening()
            try #require(try server("stop") == 0)
            do {
                try await body()
            } catch {
                _ = try? server("start")
                throw error
            }
            try #require(try server("start") == 0, "the server did not start again: see its server.log")
            try Support.waitUntilListeningAgain(since: listening)
        }

        /// Runs `scripts/postgres COMMAND` on the private server and waits for it; returns its exit
        /// status. Its output goes nowhere (a server it starts would hold a pipe open for as long as
        /// it runs), and it is spawned and reaped here: Foundation's `Process` does not reap a child
        /// whose grandchild (the server) outlives it in this test process.
        static func server(_ command: String) throws -> Int32 {
            let script = PackageRoot.url.appendingPathComponent("scripts/postgres").path
            let line = "exec '\(script)' \(command) '\(try Support.folder())' >/dev/null 2>&1 </dev/null"
            let words = ["/bin/sh", "-c", line]
            let argv = words.map { strdup($0) } + [nil]
            defer { for pointer in argv { free(pointer) } }
            var pid: pid_t = 0
            let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ)
            try #require(spawned == 0, "posix_spawn failed: \(spawned)")
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            return (status >> 8) & 0xff
        }

        /// Stops the private server for a moment and starts it again.
        static func restartServer() throws {
            let listening = try Support.sharedListening()
            try #require(try server("stop") == 0)
            SystemCall.sleep(for: .seconds(1))
            try #require(try server("start") == 0, "the server did not start again: see its server.log")
            try Support.waitUntilListeningAgain(since: listening)
        }

        /// Eight instances (processes) mixing lookups, stores and sign-outs on one group, 50 of them
        /// killed with SIGKILL at random moments and the server restarted halfway (an instance whose
        /// call meets the restart gets `databaseUnavailable` and is started again): afterwards every
        /// acknowledged store is in the group, generations only grew, and no lookup found a state that
        /// never existed (``GroupSoak``'s checks).
        @Test(.tags(.multiProcess)) func fiftyKillsAndARestartOfTheServerLoseNoAcknowledgedWrite() throws {
            let folder = TemporaryDirectory()
            let soak = GroupSoak(
                processes: StoreConformance.Processes(
                    store: "postgres", root: try Support.socketURL(), group: Support.uniqueGroup("soak")),
                journals: folder.path, workers: 8, operationsPerWorker: 250, kills: 50, midway: { try Self.restartServer() })
            let figures = try withExtendedLifetime(folder) { try soak.run() }
            print(figures)
            #expect(figures.kills == 50)
        }

        /// How long `body` took.
        static func timed<T>(_ body: () throws -> T) rethrows -> (T, Duration) {
            let start = ContinuousClock.now
            let value = try body()
            return (value, ContinuousClock.now - start)
        }

        /// The server stops: instance A keeps serving what it holds, its writes are kept in its
        /// memory (its lookups see them, nothing waits past the timeout, later calls fail fast),
        /// and once the server is back they are committed and instance B sees them.
        @Test func writesMadeWhileTheServerIsDownAreKeptAndCommittedWhenItIsBack() async throws {
            let name = Support.uniqueGroup("outage")
            let a = try CacheGroup.open(name, database: Self.database(), configuration: Self.configuration(.keepInMemory))
            let b = try CacheGroup.open(
                name, database: Self.database(socket: true), configuration: Self.configuration(.keepInMemory))
            let onA = try TokenCache(clientId: Fixtures.clientA, group: a)
            let onB = try TokenCache(clientId: Fixtures.clientA, group: b)
            try Level.store(onA, user: 1)
            try await Level.waitUntil { try onB.accessToken(for: ["User.Read"], account: Level.account(1)) != nil }
            try await Self.withServerStopped { () async throws in
                let (served, lookup) = try Self.timed { try onA.accessToken(for: ["User.Read"], account: Level.account(1)) }
                #expect(served?.token.secret == "at-1" && lookup < .milliseconds(100), "\(lookup)")
                let (_, first) = try Self.timed { try Level.store(onA, user: 2) }
                #expect(first < .seconds(3), "the first write waited \(first)")
                let (_, second) = try Self.timed { try Level.store(onA, user: 3) }
                #expect(second < .milliseconds(500), "a write during a known outage waited \(second)")
                #expect(a.pendingWrites == 2)
                #expect(try onA.accessToken(for: ["User.Read"], account: Level.account(2))?.token.secret == "at-2")
                #expect(try onA.accessToken(for: ["User.Read"], account: Level.account(3))?.token.secret == "at-3")
            }
            try await Level.waitUntil(seconds: 20) { a.pendingWrites == 0 }
            for user in 2...3 {
                try await Level.waitUntil {
                    try onB.accessToken(for: ["User.Read"], account: Level.account(user))?.token.secret == "at-\(user)"
                }
            }
        }

        /// With `.keepInMemory`, a token past its `refresh_on` but still valid is served while the
        /// server is down: the refresh's lock fails as the database does not answer, and the
        /// instance serves what it holds, as it does for any lookup; the authority is not asked.
        @Test func aTokenPastRefreshOnIsServedWhileTheServerIsDown() async throws {
            let name = Support.uniqueGroup("outage-refresh-on")
            let a = try CacheGroup.open(name, database: Self.database(), configuration: Self.configuration(.keepInMemory))
            let onA = try TokenCache(clientId: Fixtures.clientA, group: a)
            try onA.store(
                Fixtures.response(accessToken: "at-soon", extra: ["refresh_in": .number("1")]), for: Fixtures.request())
            let account = try #require(try onA.accounts().first)
            try await Task.sleep(for: .milliseconds(1_500))
            try #require(try onA.accessToken(for: ["User.Read"], account: account)?.shouldRefresh == true)
            let endpoint = RefreshRaceTests.GatedEndpoint()
            endpoint.open()
            try await Self.withServerStopped { () async throws in
                let result = try await onA.acquireTokenSilently(scopes: ["User.Read"], account: account, endpoint: endpoint)
                #expect(result.isFromCache && result.accessToken == "at-soon")
                #expect(endpoint.requests == 0)
            }
        }

        /// With `.fail`, a write while the server is down throws `databaseUnavailable` within the
        /// timeout and keeps nothing; lookups of what the instance holds are still served.
        @Test func withTheFailPolicyAWriteIsRefusedAndNothingKept() async throws {
            let name = Support.uniqueGroup("outage-fail")
            let a = try CacheGroup.open(name, database: Self.database(), configuration: Self.configuration(.fail))
            let onA = try TokenCache(clientId: Fixtures.clientA, group: a)
            try Level.store(onA, user: 1)
            try await Self.withServerStopped { () async throws in
                let (error, waited) = Self.timed { () -> TokenCacheError? in
                    do {
                        try Level.store(onA, user: 2)
                        return nil
                    } catch { return error as? TokenCacheError }
                }
                #expect(error?.code == .databaseUnavailable, "\(String(describing: error))")
                #expect(waited < .seconds(3), "\(waited)")
                #expect(a.pendingWrites == 0)
                #expect(try onA.accessToken(for: ["User.Read"], account: Level.account(2)) == nil)
                #expect(try onA.accessToken(for: ["User.Read"], account: Level.account(1))?.token.secret == "at-1")
            }
        }

        /// Instance A, on a client of its own that a test can cut off, and instance B of a new
        /// group, both with the `.keepInMemory` policy, once B has seen the token A stored for
        /// user 1: A's client, A, and each one's cache.
        static func twoInstancesSharingUserOne(_ label: String) async throws -> (
            cutOff: PostgresRowDatabase, a: CacheGroup, onA: TokenCache, onB: TokenCache
        ) {
            let name = Support.uniqueGroup(label)
            let cutOff = try Self.database()
            let a = try CacheGroup.open(name, database: cutOff, configuration: Self.configuration(.keepInMemory))
            let b = try CacheGroup.open(
                name, database: Self.database(socket: true), configuration: Self.configuration(.keepInMemory))
            let onA = try TokenCache(clientId: Fixtures.clientA, group: a)
            let onB = try TokenCache(clientId: Fixtures.clientA, group: b)
            try Level.store(onA, user: 1)
            try await Level.waitUntil { try onB.accessToken(for: ["User.Read"], account: Level.account(1)) != nil }
            return (cutOff, a, onA, onB)
        }

        /// An instance cut off from the database keeps a refresh in memory while another instance
        /// commits a newer one of the same token: when the first reaches the database again, the
        /// other's write stays, and the first's other writes are committed.
        @Test func aRecordAnotherInstanceCommittedMeanwhileKeepsItsWrite() async throws {
            let (cutOff, a, onA, onB) = try await Self.twoInstancesSharingUserOne("outage-conflict")
            cutOff.simulateOutage(for: .seconds(60))
            try Level.store(onA, user: 1, token: "at-1-from-a")
            try Level.store(onA, user: 4)
            #expect(a.pendingWrites == 2)
            try Level.store(onB, user: 1, token: "at-1-from-b")
            cutOff.simulateOutage(for: nil)
            try await Level.waitUntil(seconds: 20) { a.pendingWrites == 0 }
            try await Level.waitUntil {
                try onA.accessToken(for: ["User.Read"], account: Level.account(1))?.token.secret == "at-1-from-b"
            }
            #expect(try onB.accessToken(for: ["User.Read"], account: Level.account(1))?.token.secret == "at-1-from-b")
            try await Level.waitUntil { try onB.accessToken(for: ["User.Read"], account: Level.account(4)) != nil }
        }

        /// A sign-out made while the instance is cut off ends the user's tokens there at once (the
        /// answer it remembered too), and stays a sign-out when it reaches the database again,
        /// though another instance, which had not heard of it, refreshed the user's tokens
        /// meanwhile: the user is signed out on both.
        @Test func aSignOutKeptInMemoryWinsOverAnotherInstancesRefreshMeanwhile() async throws {
            let (cutOff, a, onA, onB) = try await Self.twoInstancesSharingUserOne("outage-sign-out")
            // Asked for on A first: A remembers the answer, which the sign-out must end.
            #expect(try onA.accessToken(for: ["User.Read"], account: Level.account(1))?.token.secret == "at-1")
            cutOff.simulateOutage(for: .seconds(60))
            try onA.signOut(Level.account(1))
            #expect(a.pendingWrites == 1)
            #expect(try onA.accessToken(for: ["User.Read"], account: Level.account(1)) == nil)
            try Level.store(onB, user: 1, token: "at-1-from-b")
            cutOff.simulateOutage(for: nil)
            try await Level.waitUntil(seconds: 20) { a.pendingWrites == 0 }
            try await Level.waitUntil { try onB.accessToken(for: ["User.Read"], account: Level.account(1)) == nil }
            #expect(try onA.accessToken(for: ["User.Read"], account: Level.account(1)) == nil)
            #expect(try onB.refreshTokens(for: Level.account(1)).isEmpty)
        }
    }
#endif
