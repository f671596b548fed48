#if canImport(SecureTokenCachePostgres)
    import Foundation
    import Glibc
    import Logging
    import Synchronization
    import TestSupport
    import Testing

    @testable import SecureTokenCache
    @testable import SecureTokenCachePostgres

    /// The PostgreSQL store against a real server (`scripts/postgres run`, which `scripts/test` starts):
    /// the store seam's conformance suite, what the database holds, and each way the database can
    /// refuse.
    @Suite(
        .serialized,
        .tags(.postgres),
        .timeLimit(.minutes(3)),
        .enabled(if: PostgresTestSupport.required, "needs the server of scripts/postgres (STC_POSTGRES_REQUIRED=1)")
    )
    struct PostgresStoreTests {
        typealias Support = PostgresTestSupport

        /// A fresh group: with `acrossInstances`, one store per open, alternately through the socket's
        /// and the loopback's connection pools, so that half the pairs meet only in the database, as
        /// two instances do; else every store through the socket's.
        static func conformance(acrossInstances: Bool = true) throws -> StoreConformance {
            let group = Support.uniqueGroup("conformance")
            let databases = [
                try Support.socketDatabase(), try acrossInstances ? Support.tcpDatabase() : Support.socketDatabase(),
            ]
            let opened = Mutex(0)
            return StoreConformance(
                name: "postgres",
                open: {
                    let database = databases[
                        opened.withLock { count in
                            count += 1
                            return count % 2
                        }]
                    return try RowStore(name: group, database: database, keyProvider: helperPassphrase, protectionReason: "test")
                },
                openWithAnotherKey: {
                    try RowStore(
                        name: group, database: databases[0], keyProvider: testPassphrase("another passphrase"),
                        protectionReason: "test")
                },
                processes: StoreConformance.Processes(store: "postgres", root: try Support.socketURL(), group: group))
        }

        @Test func aNewGroupIsEmpty() throws { try Self.conformance().aNewGroupIsEmpty() }

        /// In one instance: there the generation moves with the commit. Another instance's moves
        /// when the commit's announcement arrives (``aSignInAndASignOutOnOneInstanceReachTheOther()``).
        @Test func aCommitIsSeenWholeAtTheNextGeneration() throws {
            try Self.conformance(acrossInstances: false).aCommitIsSeenWholeAtTheNextGeneration()
        }

        @Test func aFailedOrEmptyTransactionWritesNothing() throws {
            try Self.conformance().aFailedOrEmptyTransactionWritesNothing()
        }

        @Test func concurrentWritersLoseNothing() throws {
            try Self.conformance().concurrentWritersLoseNothing(stores: 4, threadsPerStore: 2, writesPerThread: 10)
        }

        @Test func aCommitIsFollowedByAChangeEvent() async throws {
            try await Self.conformance().aCommitIsFollowedByAChangeEvent()
        }

        @Test func anotherKeyIsATypedError() throws { try Self.conformance().anotherKeyIsATypedError() }

        @Test(.tags(.multiProcess)) func aWriterKilledMidCommitLosesNoAcknowledgedTransaction() throws {
            try Self.conformance().aWriterKilledMidCommitLosesNoAcknowledgedTransaction(rounds: 10)
        }

        @Test(.tags(.multiProcess)) func twoProcessesWritingAtOnceLoseNothing() throws {
            try Self.conformance().twoProcessesWritingAtOnceLoseNothing(writesPerProcess: 200)
        }

        /// Four instances (processes) committing 1,000 transactions each to one group at once, half
        /// through each connection route: every write is there afterwards, each process saw its own.
        @Test(.tags(.multiProcess, .slow)) func fourProcessesTimesAThousandWritesLoseNothing() throws {
            let group = Support.uniqueGroup("four")
            let urls = [try Support.socketURL(), try Support.tcpURL()]
            let writers = try (0..<4).map { writer in
                try Helper(["--store", "postgres", "write", urls[writer % 2], group, "w\(writer)", "1000"])
            }
            for (writer, lines) in writers.map({ $0.finish() }).enumerated() {
                #expect(lines.filter { $0.hasPrefix("ack ") }.count == 1000, "writer \(writer): \(lines.suffix(3))")
                #expect(lines.last?.hasPrefix("verified") == true, "writer \(writer): \(lines.last ?? "no output")")
            }
            let (records, cursor) = try RowStore(
                name: group, database: Support.socketDatabase(), keyProvider: helperPassphrase, protectionReason: "test"
            ).load()
            #expect(records.count == 4000 && cursor.generation == 4000)
        }

        /// 8 instances (processes, half through each connection route) × 32 tasks asking at once for
        /// an app token the group does not have, then for one past its refresh time: one token
        /// request each time, whose token every caller gets.
        @Test(.tags(.multiProcess)) func eightInstancesTimesThirtyTwoTasksMakeOneTokenRequest() async throws {
            let authority = try FakeAuthority()
            let url = "\(authority.base)/\(Fixtures.tenant)"
            let requests = { try await authority.stats()["\(AppTokenTests.daemon) client_credentials"] ?? 0 }
            let group = Support.uniqueGroup("stampede")
            let routes = [try Support.socketURL(), try Support.tcpURL()]
            func stampede(processes: Int, tasks: Int) throws -> [String] {
                let helpers = try (0..<processes).map { process in
                    try Helper([
                        "--store", "postgres", "app-stampede", routes[process % 2], group, url, AppTokenTests.daemon,
                        String(tasks),
                    ])
                }
                return helpers.flatMap { $0.finish() }
            }
            let fresh = try stampede(processes: 8, tasks: 32)
            #expect(fresh.count == 256 && fresh.allSatisfy { $0.hasPrefix("token ") }, "\(Set(fresh))")
            #expect(ConfidentialClientProcessTests.fingerprints(fresh).count == 1, "\(Set(fresh))")
            #expect(try await requests() == 1)

            // A token stored within 300 s of its expiry counts as expired: again one request among 256.
            try await authority.control(["expires_in": 200])
            let stale = Support.uniqueGroup("stampede-stale")
            let first = try Helper([
                "--store", "postgres", "app-stampede", routes[0], stale, url, AppTokenTests.daemon, "1",
            ]).finish()
            #expect(first.count == 1 && first[0].hasSuffix("authority"), "\(first)")
            try await authority.control([:])
            let before = try await requests()
            let renewed = try (0..<8).map { process in
                try Helper([
                    "--store", "postgres", "app-stampede", routes[process % 2], stale, url, AppTokenTests.daemon, "32",
                ])
            }.flatMap { $0.finish() }
            #expect(renewed.count == 256 && renewed.allSatisfy { $0.hasPrefix("token ") }, "\(Set(renewed))")
            let renewedTokens = ConfidentialClientProcessTests.fingerprints(renewed)
            #expect(renewedTokens.count == 1 && !renewedTokens.contains(String(first[0].split(separator: " ")[1])))
            #expect(try await requests() == before + 1)
        }

        // MARK: Through the engine

        static func configuration() -> CacheConfiguration {
            CacheConfiguration(keySource: .passphrase("fleet passphrase"))
        }

        /// Two instances (two connection pools, two listeners): a sign-in on one is served by the
        /// other once the notification arrives, and so is a sign-out.
        @Test func aSignInAndASignOutOnOneInstanceReachTheOther() async throws {
            let name = Support.uniqueGroup("fleet")
            let a = try CacheGroup.open(name, database: Support.socketDatabase(), configuration: Self.configuration())
            let b = try CacheGroup.open(name, database: Support.tcpDatabase(), configuration: Self.configuration())
            let onA = try TokenCache(clientId: Fixtures.clientA, group: a)
            let onB = try TokenCache(clientId: Fixtures.clientA, group: b)
            try onA.store(Fixtures.response(), for: Fixtures.request())
            let account = try await Self.eventually { try onB.accounts().first }
            #expect(try onB.accessToken(for: ["User.Read"], account: account)?.token.secret == "at-secret")
            try onA.signOut(account)
            _ = try await Self.eventually { try onB.accessToken(for: ["User.Read"], account: account) == nil ? true : nil }
            // And a third instance opened now starts from the database alone.
            let c = try TokenCache(
                clientId: Fixtures.clientA,
                group: CacheGroup.open(name, database: Support.tcpDatabase(), configuration: Self.configuration()))
            #expect(try c.accounts().isEmpty)
        }

        /// A lookup on instance B right after instance A's commit returned, before B can have
        /// heard its announcement, finds what A stored: a miss reads the group's generation from the
        /// database before it is believed (an instance that waited for another's token request
        /// must find its token, not ask again). 50 rounds.
        @Test func aMissRightAfterAnotherInstancesCommitFindsIt() throws {
            let name = Support.uniqueGroup("miss-then-read")
            let onA = try TokenCache(
                clientId: Fixtures.clientA,
                group: CacheGroup.open(name, database: Support.socketDatabase(), configuration: Self.configuration()))
            let onB = try TokenCache(
                clientId: Fixtures.clientA,
                group: CacheGroup.open(name, database: Support.tcpDatabase(), configuration: Self.configuration()))
            try onA.store(Fixtures.response(), for: Fixtures.request())
            let account = try #require(try onA.accounts().first)
            for round in 0..<50 {
                let scope = "Round.\(round)"
                try onA.store(
                    Fixtures.response(accessToken: "at-\(round)", scope: scope), for: Fixtures.request(scopes: [scope]))
                #expect(try onB.accessToken(for: [scope], account: account)?.token.secret == "at-\(round)", "round \(round)")
            }
        }

        /// A writer that has not heard of another instance's commit yet writes in one round trip
        /// only if none came; otherwise its transaction runs again on what that commit wrote. Here
        /// instance B deletes what instance A just put, right after A's commit returned: B's body
        /// finds the record each round (so the delete is never lost), whether B's first try wrote
        /// nothing or something else. 50 rounds of each.
        @Test func aWriterBehindAnotherInstancesCommitRunsAgainOnIt() throws {
            let name = Support.uniqueGroup("behind")
            let open = { (database: PostgresRowDatabase) in
                try RowStore(name: name, database: database, keyProvider: helperPassphrase, protectionReason: "test")
            }
            let (a, b) = (try open(Support.socketDatabase()), try open(Support.tcpDatabase()))
            var cursorA = try a.transact(since: try a.load().1) { _ in [StoreConformance.put("first", "1")] }
            var cursorB = try b.update(since: try b.load().1).cursor
            var ranAgain = 0
            for round in 0..<100 {
                let record = "r-\(round)"
                cursorA = try a.transact(since: cursorA) { _ in [StoreConformance.put(record, "\(round)")] }
                var tries = 0
                cursorB = try b.transact(since: cursorB) { transaction in
                    tries += 1
                    var seen: [String: String] = [:]
                    StoreConformance.apply(transaction.update, to: &seen)
                    guard seen[record] != nil else {
                        // Half the rounds write something else on the first try, half nothing.
                        return round % 2 == 0 ? [StoreConformance.put("b-\(round)", "stale")] : []
                    }
                    return [.delete(RecordID(kind: .accessToken, name: record))]
                }
                #expect(tries <= 2, "round \(round): \(tries) tries")
                if tries == 2 { ranAgain += 1 }
                cursorA = try a.update(since: cursorA).cursor
            }
            let content = StoreConformance.contents(try open(Support.socketDatabase()).load().0)
            #expect(content.keys.filter { $0.hasPrefix("r-") }.isEmpty, "\(content.keys.sorted())")
            #expect(content.keys.filter { $0.hasPrefix("b-") }.isEmpty, "a stale try was written: \(content.keys.sorted())")
            #expect(content["first"] == "1")
            // B usually has not heard of A's commit when it writes: its first try is then refused.
            print("aWriterBehindAnotherInstancesCommitRunsAgainOnIt: \(ranAgain) of 100 rounds ran twice")
            #expect(ranAgain > 0, "no round tried to write before hearing of A's commit: the test did not test that")
        }

        /// In a fleet every instance writes, so a store that keeps part of the group is usually
        /// behind the group's generation: it writes in one round trip still when every commit since
        /// its read was heard, in order, and touched none of its partitions; a commit to one of them
        /// sends it the long way, which reads that commit. 20 rounds of each.
        @Test func aPartialStoreWritesInOneRoundTripPastOtherPartitionsCommits() throws {
            let name = Support.uniqueGroup("past-others")
            let options = Self.keepingPartByPrefix
            let a = try RowStore(
                name: name, database: Support.socketDatabase(), keyProvider: helperPassphrase, protectionReason: "test",
                options: options)
            let counting = InterposedRowDatabase(try Support.tcpDatabase())
            let b = try RowStore(
                name: name, database: counting, keyProvider: helperPassphrase, protectionReason: "test", options: options)
            // B's first read once it listens moves what it keeps as if every partition changed,
            // which would send its next write the long way: the rounds start after it.
            try Support.waitUntilListening(counting)
            var cursorA = try a.keep(["pa"], since: try a.load().1, evenIfEmpty: true).cursor
            var cursorB = try b.keep(["pb"], since: try b.load().1, evenIfEmpty: true).cursor
            cursorA = try a.transact(since: cursorA) { _ in [StoreConformance.put("pa/first", "1")] }
            cursorB = try b.update(since: cursorB).cursor
            try Self.expectOneRoundTripPastOtherPartitions(a, b, counting: counting, cursorA: &cursorA, cursorB: &cursorB)
            for round in 0..<20 {
                // A's write to B's partition: B's next write must see it.
                cursorA = try a.transact(since: cursorA) { _ in [StoreConformance.put("pb/t-\(round)", "\(round)")] }
                Support.waitUntil(b.watch, hasHeardThrough: cursorA.position)
                var seen = false
                cursorB = try b.transact(since: cursorB) { transaction in
                    var content: [String: String] = [:]
                    StoreConformance.apply(transaction.update, to: &content)
                    seen = content["pb/t-\(round)"] != nil
                    return seen ? [.delete(RecordID(kind: .accessToken, name: "pb/t-\(round)"))] : []
                }
                #expect(seen, "round \(round): B wrote without reading A's commit to its partition")
            }
            let content = StoreConformance.contents(
                try RowStore(
                    name: name, database: Support.socketDatabase(), keyProvider: helperPassphrase, protectionReason: "test"
                ).load().0)
            #expect(content.keys.filter { $0.hasPrefix("pa/r-") }.count == 20)
            #expect(content.keys.filter { $0.hasPrefix("pb/s-") }.count == 20)
            #expect(content.keys.filter { $0.hasPrefix("pb/t-") }.isEmpty)
        }

        /// Options of a store that keeps part of its group, a record's partition the part of its
        /// name before the first "/".
        static var keepingPartByPrefix: RowStoreOptions {
            var options = RowStoreOptions()
            options.keepsPart = true
            options.classify = { record in (String(record.id.name.prefix { $0 != "/" }), nil) }
            return options
        }

        /// 20 rounds of a commit of `a` to partition `pa`, then, once `b` (whose database is
        /// `counting`) has heard of it, one of `b` to `pb`, which must take one round trip.
        static func expectOneRoundTripPastOtherPartitions(
            _ a: RowStore, _ b: RowStore, counting: InterposedRowDatabase, cursorA: inout StoreCursor,
            cursorB: inout StoreCursor
        ) throws {
            for round in 0..<20 {
                cursorA = try a.transact(since: cursorA) { _ in [StoreConformance.put("pa/r-\(round)", "\(round)")] }
                Support.waitUntil(b.watch, hasHeardThrough: cursorA.position)
                let before = counting.counts()
                cursorB = try b.transact(since: cursorB) { _ in [StoreConformance.put("pb/s-\(round)", "\(round)")] }
                #expect(counting.counts() == (before.0 + 1, before.1), "round \(round): not one round trip")
                Support.waitUntil(b.watch, hasHeardThrough: cursorB.position)
            }
        }

        /// Another process's commit announced while the listener was away, and a reconnection
        /// whose first reads fail: the process catches up once a read succeeds, and counts the
        /// resynchronisation then.
        @Test func aResynchronisationWhoseReadFailsIsMadeAgainUntilItSucceeds() throws {
            let flaky = InterposedRowDatabase(try Support.socketDatabase())
            let name = Support.uniqueGroup("resynchronise")
            let reader = try RowStore(name: name, database: flaky, keyProvider: helperPassphrase, protectionReason: "test")
            try Support.waitUntilListening(flaky)
            let writer = try RowStore(
                name: name, database: Support.tcpDatabase(), keyProvider: helperPassphrase, protectionReason: "test")
            let before = reader.currentGeneration()
            // Missed: announced while this process did not listen.
            flaky.isDeaf = true
            _ = try writer.transact(since: try writer.load().1) { _ in [StoreConformance.put("missed", "1")] }
            let committed = try #require(try Support.socketDatabase().head(of: RowStore.groupID(name))).generation
            #expect(committed > before)
            flaky.isDeaf = false
            flaky.failingHeads = 2
            flaky.announce(.resynchronise)
            let deadline = ContinuousClock.now + .seconds(10)
            while reader.currentGeneration() < committed, ContinuousClock.now < deadline { usleep(10_000) }
            #expect(reader.currentGeneration() == committed)
            #expect(flaky.failingHeads == 0)
            #expect(RowGroupWatch.resynchronisations(of: flaky) == 2)
        }

        /// A configuration that reaches the server through a new ``StallingProxy`` (returned, for
        /// the test to stall and close), with a timeout of a second.
        static func throughStallingProxy() throws -> (PostgresStoreConfiguration, StallingProxy) {
            var configuration = try PostgresStoreConfiguration(url: Support.tcpURL())
            guard case .tcp(_, let serverPort) = configuration.endpoint else { throw PostgresTestFailure(description: "no port") }
            let proxy = try StallingProxy(to: serverPort)
            configuration.endpoint = .tcp(host: "127.0.0.1", port: proxy.port)
            configuration.timeout = .seconds(1)
            return (configuration, proxy)
        }

        /// The database of `configuration` and a new group in it, named after `prefix`.
        static func group(_ prefix: String, through configuration: PostgresStoreConfiguration) throws
            -> (PostgresRowDatabase, [UInt8])
        {
            let database = try PostgresRowDatabase.shared(configuration, logger: .discarding)
            let name = Support.uniqueGroup(prefix)
            _ = try RowStore(name: name, database: database, keyProvider: helperPassphrase, protectionReason: "test")
            return (database, RowStore.groupID(name))
        }

        /// Whether a read of `group`'s head through `database` answers within 15 seconds. Calls fail
        /// at once while an outage lasts, and one tries the database every few seconds: the first
        /// such try that gets a connection that answers ends it.
        static func answersAgain(_ database: PostgresRowDatabase, _ group: [UInt8]) -> Bool {
            let deadline = ContinuousClock.now + .seconds(15)
            repeat {
                if (try? database.head(of: group)) != nil { return true }
                usleep(200_000)
            } while ContinuousClock.now < deadline
            return false
        }

        /// More refreshes at once than the pool has connections, each holding its lock (on a
        /// connection of the pool) while it reads the group: the locks never take every
        /// connection, so each holder's reads get one, and every refresh ends.
        @Test func locksLeaveAConnectionForTheirHoldersWork() async throws {
            var configuration = try PostgresStoreConfiguration(url: Support.tcpURL())
            configuration.maximumConnections = 2
            configuration.timeout = .seconds(2)
            let database = try PostgresRowDatabase.shared(configuration, logger: .discarding)
            let name = Support.uniqueGroup("locks")
            _ = try RowStore(name: name, database: database, keyProvider: helperPassphrase, protectionReason: "test")
            let group = RowStore.groupID(name)
            try await withThrowingTaskGroup(of: Void.self) { refreshes in
                for _ in 0..<3 {
                    refreshes.addTask {
                        let release = try await database.lock(Int64.random(in: 1...Int64.max), timeout: .seconds(10))
                        _ = try database.head(of: group)
                        try await Task.sleep(for: .milliseconds(100))
                        _ = try database.head(of: group)
                        await release()
                    }
                }
                try await refreshes.waitForAll()
            }
        }

        /// The connection that listens for other processes' commits goes silent without being
        /// closed (a firewall forgot it): its check finds it, a new one listens, and the commits
        /// made after that are heard.
        @Test func aListenerThatStopsAnsweringIsReplaced() throws {
            var (configuration, proxy) = try Self.throughStallingProxy()
            defer { proxy.close() }
            configuration.listenerCheckInterval = .milliseconds(300)
            let proxied = try PostgresRowDatabase.shared(configuration, logger: .discarding)
            let name = Support.uniqueGroup("stalled-listener")
            let reader = try RowStore(name: name, database: proxied, keyProvider: helperPassphrase, protectionReason: "test")
            try Support.waitUntilListening(proxied)
            let writer = try RowStore(
                name: name, database: Support.socketDatabase(), keyProvider: helperPassphrase, protectionReason: "test")
            var cursor = try writer.load().1
            let groupID = RowStore.groupID(name)
            // Checked and answering, the listener stays.
            let listened = RowGroupWatch.resynchronisations(of: proxied)
            usleep(1_500_000)
            #expect(RowGroupWatch.resynchronisations(of: proxied) == listened)
            proxy.stallConnections()
            // Until the reader hears a commit made after the stall: only a new listener can.
            let deadline = ContinuousClock.now + .seconds(15)
            var committed: UInt64 = 0
            repeat {
                cursor = try writer.transact(since: cursor) { _ in [StoreConformance.put("after-stall-\(committed)", "1")] }
                committed = try #require(try Support.socketDatabase().head(of: groupID)).generation
                usleep(200_000)
            } while reader.currentGeneration() < committed && ContinuousClock.now < deadline
            #expect(reader.currentGeneration() >= committed, "the reader never heard a commit after the stall")
        }

        /// The pool's connections go silent without being closed, new ones too for a while: each
        /// call fails at its timeout, and its connection is closed with it rather than kept
        /// leased by a query that is never answered, so once connections flow again the calls get
        /// a new one. Connections kept would fail every later call.
        @Test func aCallThatTimesOutOnASilentConnectionGivesItsConnectionUp() throws {
            var (configuration, proxy) = try Self.throughStallingProxy()
            defer { proxy.close() }
            configuration.maximumConnections = 2
            let (proxied, groupID) = try Self.group("stalled-pool", through: configuration)
            // Calls at once, so that the pool opens as many connections as it may.
            for _ in 0..<5 {
                DispatchQueue.concurrentPerform(iterations: configuration.maximumConnections) { _ in
                    #expect((try? proxied.head(of: groupID)) != nil)
                }
            }
            proxy.stallsNewConnections = true
            proxy.stallConnections()
            // Until every connection the pool may have has been tried, and timed out.
            var timedOut = 0
            let deadline = ContinuousClock.now + .seconds(15)
            while timedOut < configuration.maximumConnections && ContinuousClock.now < deadline {
                let started = ContinuousClock.now
                let error = #expect(throws: TokenCacheError.self) { try proxied.head(of: groupID) }
                #expect(error?.code == .databaseUnavailable, "\(String(describing: error))")
                if ContinuousClock.now - started >= .milliseconds(900) { timedOut += 1 } else { usleep(100_000) }
            }
            proxy.stallsNewConnections = false
            #expect(Self.answersAgain(proxied, groupID), "no call answered after the stall: the pool's connection stayed leased")
        }

        /// The same for a lock's connection that goes silent while the lock is held: giving the
        /// lock back is never answered, and the connection is closed past the timeout instead of
        /// staying leased, with the slot it held among the connections locks may use
        /// (``LockSlots``), which the next lock needs.
        @Test func aLockGivenBackOnASilentConnectionGivesItsConnectionUp() async throws {
            var (configuration, proxy) = try Self.throughStallingProxy()
            defer { proxy.close() }
            configuration.maximumConnections = 2
            let (proxied, groupID) = try Self.group("stalled-lock", through: configuration)
            let release = try await proxied.lock(Int64.random(in: 1...Int64.max), timeout: .seconds(1))
            proxy.stallConnections()
            await release()
            let next = try await proxied.lock(Int64.random(in: 1...Int64.max), timeout: .seconds(5))
            await next()
            #expect(Self.answersAgain(proxied, groupID))
        }

        /// A group opened once the process listens gets no read after listening began: it takes its
        /// starting point from a read when it is opened. Without one, announcements past a commit
        /// made before it was opened would wait for a gap that never closes, and a store keeping
        /// part of it would never write in one round trip.
        @Test func aGroupOpenedWhileTheProcessListensWritesInOneRoundTrip() throws {
            let options = Self.keepingPartByPrefix
            let counting = InterposedRowDatabase(try Support.tcpDatabase())
            _ = try RowStore(
                name: Support.uniqueGroup("listening"), database: counting, keyProvider: helperPassphrase,
                protectionReason: "test")
            try Support.waitUntilListening(counting)
            let name = Support.uniqueGroup("opened-later")
            let a = try RowStore(
                name: name, database: Support.socketDatabase(), keyProvider: helperPassphrase, protectionReason: "test",
                options: options)
            var cursorA = try a.keep(["pa"], since: try a.load().1, evenIfEmpty: true).cursor
            for index in 0..<3 {
                cursorA = try a.transact(since: cursorA) { _ in [StoreConformance.put("pa/before-\(index)", "\(index)")] }
            }
            let b = try RowStore(
                name: name, database: counting, keyProvider: helperPassphrase, protectionReason: "test", options: options)
            var cursorB = try b.keep(["pb"], since: try b.load().1, evenIfEmpty: true).cursor
            try Self.expectOneRoundTripPastOtherPartitions(a, b, counting: counting, cursorA: &cursorA, cursorB: &cursorB)
        }

        /// A new group with one commit, for a test of the database itself: the database, the
        /// group's id and its head.
        static func groupAtTheDatabase(_ prefix: String) throws -> (PostgresRowDatabase, [UInt8], RowGroupHead) {
            let database = try Support.socketDatabase()
            let name = Support.uniqueGroup(prefix)
            let store = try RowStore(name: name, database: database, keyProvider: helperPassphrase, protectionReason: "test")
            _ = try store.transact(since: try store.load().1) { _ in [StoreConformance.put("first", "1")] }
            let group = RowStore.groupID(name)
            return (database, group, try #require(try database.head(of: group)))
        }

        /// The one-round-trip commit at the database: refused (nothing written) from a generation
        /// that is not the group's or from another epoch; written, announced and counted in the
        /// head from the group's own.
        @Test func aCommitIfStillAtWritesOnlyFromTheGroupsGeneration() throws {
            let (database, group, head) = try Self.groupAtTheDatabase("if-still-at")
            let row = { (text: String) in SealedRow(name: Array(text.utf8), version: 0, isDeletion: false, sealed: [1, 2, 3]) }
            #expect(try database.commit(group, epoch: head.epoch, ifStillAt: head.generation - 1, rows: [row("old")]) == nil)
            #expect(try database.commit(group, epoch: head.epoch &+ 1, ifStillAt: head.generation, rows: [row("epoch")]) == nil)
            #expect(try database.head(of: group) == head)
            let after = try #require(
                try database.commit(group, epoch: head.epoch, ifStillAt: head.generation, rows: [row("new")]))
            #expect(
                after
                    == RowGroupHead(
                        header: head.header, epoch: head.epoch, generation: head.generation + 1, horizon: head.horizon))
            #expect(try database.head(of: group) == after)
            let (_, rows) = try database.rows(of: group, epoch: head.epoch, after: head.generation, selection: .wholeGroup)
            #expect(rows.map { String(decoding: $0.name, as: UTF8.self) } == ["new"])
            #expect(rows.first?.version == after.generation)
        }

        /// A partition load reads the same through the statement's form for one partition as
        /// through its form for several, with the head locked (a write's read) or not, and whether
        /// the reader heard of a commit past its version or not (then the rows of a partition are
        /// read first, and the changes only when the head moved): the live rows of the partitions
        /// it names whatever their version, and every row written after the reader's version.
        @Test func aLoadOfOnePartitionReadsWhatALoadOfSeveralReads() throws {
            let (database, group, head) = try Self.groupAtTheDatabase("one-partition")
            func row(_ name: String, in partition: String) -> SealedRow {
                SealedRow(
                    name: Array(name.utf8), version: 0, isDeletion: false, sealed: [1, 2, 3], partition: Array(partition.utf8))
            }
            // The reader is at `version`, which p1 and p2 were written before; p3 was written after.
            let version = try #require(
                try database.commit(
                    group, epoch: head.epoch, ifStillAt: head.generation,
                    rows: [row("a1", in: "p1"), row("a2", in: "p1"), row("b1", in: "p2"), row("b2", in: "p2")])
            ).generation
            _ = try #require(try database.commit(group, epoch: head.epoch, ifStillAt: version, rows: [row("c1", in: "p3")]))
            func names(loading: [String], after: UInt64 = version, locking: Bool, heard: Bool = true) throws -> [String] {
                let selection = RowSelection(kept: { [] }, loading: loading.map { Array($0.utf8) }, heardOfChanges: heard)
                var rows: [SealedRow] = []
                if locking {
                    _ = try database.commit(group, epoch: head.epoch, after: after, selection: selection) { _, read in
                        rows = read
                        return RowCommit(rows: [])
                    }
                } else {
                    let (read, found) = try database.rows(of: group, epoch: head.epoch, after: after, selection: selection)
                    #expect(read.generation == version + 1)
                    rows = found
                }
                return rows.map { String(decoding: $0.name, as: UTF8.self) }.sorted()
            }
            for (locking, heard) in [(false, true), (false, false), (true, true)] {
                #expect(try names(loading: ["p1"], locking: locking, heard: heard) == ["a1", "a2", "c1"])
                #expect(try names(loading: ["p1", "p2"], locking: locking, heard: heard) == ["a1", "a2", "b1", "b2", "c1"])
                #expect(try names(loading: ["p4"], locking: locking, heard: heard) == ["c1"])
                #expect(try names(loading: [], locking: locking, heard: heard) == ["c1"])
                // A reader at the head: the partition's rows, whatever their version, and no change.
                #expect(try names(loading: ["p3"], after: version + 1, locking: locking, heard: heard) == ["c1"])
                #expect(try names(loading: ["p1"], after: version + 1, locking: locking, heard: heard) == ["a1", "a2"])
                #expect(try names(loading: ["p4"], after: version + 1, locking: locking, heard: heard) == [])
            }
            #expect(try database.head(of: group)?.generation == version + 1)
        }

        /// The coherence promise, over 1,000 sign-outs on instance A: once instance B's generation
        /// has reached A's sign-out commit (its announcement arrived), B never serves that account's
        /// token again. Prints how long B took to stop (median and 99th percentile).
        @Test(.tags(.slow)) func aSignOutOnOneInstanceIsNeverServedByAnotherAfterItsAnnouncement() async throws {
            let name = Support.uniqueGroup("coherence")
            let a = try CacheGroup.open(name, database: Support.socketDatabase(), configuration: Self.configuration())
            let b = try CacheGroup.open(name, database: Support.tcpDatabase(), configuration: Self.configuration())
            let onA = try TokenCache(clientId: Fixtures.clientA, group: a)
            let onB = try TokenCache(clientId: Fixtures.clientA, group: b)
            var latencies: [Duration] = []
            for user in 0..<1000 {
                let uid = String(format: "00000000-0000-0000-2222-%012d", user)
                try onA.store(
                    Fixtures.response(uid: uid, username: "user\(user)@contoso.com", accessToken: "at-\(user)"),
                    for: Fixtures.request())
                let account = try await Self.eventually { try onB.account(username: "user\(user)@contoso.com") }
                _ = try await Self.eventually { try onB.accessToken(for: ["User.Read"], account: account) }
                try onA.signOut(account)
                let signedOut = a.store.currentGeneration()
                let started = ContinuousClock.now
                while true {
                    let seen = b.store.currentGeneration()
                    let served = try onB.accessToken(for: ["User.Read"], account: account) != nil
                    if seen >= signedOut {
                        #expect(!served, "user \(user): served after the sign-out's announcement arrived")
                        break
                    }
                    if !served { break }
                    try #require(ContinuousClock.now - started < .seconds(5), "user \(user): the sign-out never arrived")
                }
                latencies.append(ContinuousClock.now - started)
            }
            latencies.sort()
            print(
                "postgres coherence: a sign-out on A stopped B serving after \(latencies[latencies.count / 2]) (median), "
                    + "\(latencies[latencies.count * 99 / 100]) (99th percentile), \(latencies.last!) (most) over 1,000 sign-outs"
            )
        }

        /// What `produce` returns once it is not `nil`, trying for up to 5 seconds.
        static func eventually<T>(_ produce: () throws -> T?) async throws -> T {
            let deadline = ContinuousClock.now + .seconds(5)
            while ContinuousClock.now < deadline {
                if let value = try produce() { return value }
                try await Task.sleep(for: .milliseconds(10))
            }
            return try #require(try produce(), "not within 5 s")
        }

        // MARK: What the database holds

        /// `pg_dump` of the database holds none of the tokens, user names, tenant ids, client ids or
        /// scopes the test stored, nor the group's name.
        @Test func theDatabaseHoldsNothingInClear() throws {
            let name = Support.uniqueGroup("dump")
            let group = try CacheGroup.open(name, database: Support.socketDatabase(), configuration: Self.configuration())
            let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
            let secrets = [
                "at-dump-7f3c1e", "rt-dump-9a8b2d", "Dumped.User@Contoso.com", Fixtures.tenant, Fixtures.clientA,
                "Calendars.ReadWrite.Dumped", "00000000-0000-0000-1111-00000000d00d", name,
            ]
            try cache.store(
                Fixtures.response(
                    uid: secrets[6], username: secrets[2], accessToken: secrets[0], refreshToken: secrets[1],
                    scope: "\(secrets[5]) openid profile"),
                for: Fixtures.request(scopes: [secrets[5]]))
            let dump = try Support.dump()
            #expect(dump.contains("stc_rows"), "the dump is not of the token cache's database")
            for secret in secrets {
                #expect(!dump.localizedCaseInsensitiveContains(secret), "\(secret) is in the database in clear")
                // Nor in the hex of a bytea column.
                let hex = Array(secret.utf8).map { String(format: "%02x", $0) }.joined()
                #expect(!dump.contains(hex), "\(secret) is in the database as bytes")
            }
            // One row per record the group holds: what a fresh instance loads is what the table has.
            let rows = try Support.psql("SELECT count(*) FROM stc_rows WHERE group_id = \(Support.groupLiteral(name))")
            let records = try RowStore(
                name: name, database: Support.tcpDatabase(), keyProvider: PassphraseKeyProvider(passphrase: "fleet passphrase"),
                protectionReason: "test"
            ).load().0
            #expect(records.count >= 5 && Int(rows.trimmingCharacters(in: .whitespacesAndNewlines)) == records.count, "\(rows)")
        }

        /// A row copied over another (same group, another name), a row of one group copied into
        /// another group, and a damaged byte: each fails to open with `.storeCorrupted`, and a third
        /// group is untouched.
        @Test func aMovedOrDamagedRowIsATypedErrorAndNoOtherGroupIsAffected() throws {
            let database = try Support.socketDatabase()
            func open(_ name: String) throws -> RowStore {
                try RowStore(name: name, database: database, keyProvider: helperPassphrase, protectionReason: "test")
            }
            let (moved, copied, damaged, bystander) = (
                Support.uniqueGroup("moved"), Support.uniqueGroup("copied"), Support.uniqueGroup("damaged"),
                Support.uniqueGroup("bystander")
            )
            for name in [moved, copied, damaged, bystander] {
                let store = try open(name)
                _ = try store.transact(since: try store.load().1) { _ in
                    [StoreConformance.put("a", "secret a of \(name)"), StoreConformance.put("b", "secret b of \(name)")]
                }
            }
            // One row's sealed bytes over the other's.
            try Support.psql(
                """
                UPDATE stc_rows AS target SET sealed = source.sealed FROM stc_rows AS source
                WHERE target.group_id = \(Support.groupLiteral(moved)) AND source.group_id = target.group_id
                AND source.name <> target.name
                """)
            // A row of `bystander` copied over the rows of `copied`, version and all.
            try Support.psql(
                """
                UPDATE stc_rows AS target SET sealed = source.sealed, version = source.version FROM stc_rows AS source
                WHERE target.group_id = \(Support.groupLiteral(copied)) AND source.group_id = \(Support.groupLiteral(bystander))
                """)
            // One byte of the box flipped.
            try Support.psql(
                """
                UPDATE stc_rows SET sealed = set_byte(sealed, 30, get_byte(sealed, 30) # 1)
                WHERE group_id = \(Support.groupLiteral(damaged))
                """)
            for name in [moved, copied, damaged] {
                let error = #expect(throws: TokenCacheError.self, "\(name)") { _ = try open(name).load() }
                #expect(error?.code == .storeCorrupted, "\(name): \(String(describing: error))")
                #expect(error.map { !$0.message.contains("secret") } ?? true)
            }
            let (records, _) = try open(bystander).load()
            #expect(
                StoreConformance.contents(records) == ["a": "secret a of \(bystander)", "b": "secret b of \(bystander)"])
        }

        /// The counters the library keeps in `int8` columns, set negative by hand (a row's
        /// version, a group's generation): a typed error when the group is read, not a trap in
        /// the conversion, and another group is untouched.
        @Test func aNegativeCounterWrittenByHandIsATypedError() throws {
            let database = try Support.socketDatabase()
            func open(_ name: String) throws -> RowStore {
                try RowStore(name: name, database: database, keyProvider: helperPassphrase, protectionReason: "test")
            }
            let (row, head, bystander) = (
                Support.uniqueGroup("negative-row"), Support.uniqueGroup("negative-head"), Support.uniqueGroup("bystander")
            )
            for name in [row, head, bystander] {
                let store = try open(name)
                _ = try store.transact(since: try store.load().1) { _ in [StoreConformance.put("a", "secret a of \(name)")] }
            }
            try Support.psql("UPDATE stc_rows SET version = -5 WHERE group_id = \(Support.groupLiteral(row))")
            try Support.psql("UPDATE stc_groups SET generation = -1 WHERE id = \(Support.groupLiteral(head))")
            for name in [row, head] {
                let error = #expect(throws: TokenCacheError.self, "\(name)") { _ = try open(name).load() }
                #expect(error?.code == .storeCorrupted, "\(name): \(String(describing: error))")
                #expect(error?.message.contains("negative") == true, "\(name): \(String(describing: error))")
            }
            #expect(StoreConformance.contents(try open(bystander).load().0) == ["a": "secret a of \(bystander)"])
        }

        // MARK: Sweeping

        /// 1,600 commits, each putting a new record and deleting the previous one: the deletion rows
        /// older than the kept history are swept (the table stays bounded), a reader that kept up
        /// replays changes, and one left at the first commit reloads, both ending right.
        @Test func sweepsKeepTheTableBoundedAndEveryReaderRight() throws {
            let name = Support.uniqueGroup("sweep")
            let database = try Support.socketDatabase()
            let open = { try RowStore(name: name, database: database, keyProvider: helperPassphrase, protectionReason: "test") }
            let writer = try open()
            let (follower, laggard) = (try open(), try open())
            var cursor = try writer.transact(since: try writer.load().1) { _ in [StoreConformance.put("n0", "0")] }
            var (_, followerCursor) = try follower.load()
            let laggardCursor = try laggard.load().1
            var followed = ["n0": "0"]
            for index in 1..<1600 {
                cursor = try writer.transact(since: cursor) { _ in
                    [StoreConformance.put("n\(index)", "\(index)"), .delete(RecordID(kind: .accessToken, name: "n\(index - 1)"))]
                }
                if index % 100 == 0 {
                    let update = try follower.update(since: followerCursor)
                    StoreConformance.apply(update, to: &followed)
                    followerCursor = update.cursor
                }
            }
            let update = try follower.update(since: followerCursor)
            StoreConformance.apply(update, to: &followed)
            #expect(followed == ["n1599": "1599"])
            guard case .reload(let records, _) = try laggard.update(since: laggardCursor) else {
                Issue.record("a reader behind the swept history must reload")
                return
            }
            #expect(StoreConformance.contents(records) == ["n1599": "1599"])
            let group = Support.groupLiteral(name)
            let horizon = try Support.psql("SELECT horizon FROM stc_groups WHERE id = \(group)")
            #expect(horizon.hasPrefix("512"), "\(horizon)")
            let deletions = try Support.psql("SELECT count(*) FROM stc_rows WHERE group_id = \(group) AND deleted")
            let count = Int(deletions.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
            #expect(count > 0 && count <= Int(RowStore.historyKept + RowStore.sweepInterval), "\(count) deletion rows")
        }

        /// Every 256th commit starts a sweep in the background, which deletes the access tokens whose
        /// expiry passed (the database knows each row's expiry) and nothing else.
        @Test func everyFewHundredCommitsASweepDeletesExpiredAccessTokens() async throws {
            let name = Support.uniqueGroup("expired")
            let now = Int64(Date().timeIntervalSince1970)
            let store = try RowStore(
                name: name, database: Support.socketDatabase(), keyProvider: helperPassphrase, protectionReason: "test",
                options: RowStoreOptions(classify: CacheGroup.rowTraits, clock: { now + 3600 }))
            let group = try CacheGroup(name: name, store: store, clock: { now })
            let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
            try cache.store(Fixtures.response(accessToken: "at-expiring", expiresIn: 600), for: Fixtures.request())
            for index in 0..<Int(RowStore.sweepInterval) - 2 {
                try cache.store(
                    Fixtures.response(accessToken: "at-\(index)", scope: "Scope.\(index)", expiresIn: 86400),
                    for: Fixtures.request(scopes: ["Scope.\(index)"]))
            }
            let payloads = { try store.load().0.map { String(decoding: $0.payload, as: UTF8.self) } }
            #expect(try payloads().contains { $0.contains("at-expiring") }, "swept before the 256th commit")
            try cache.store(
                Fixtures.response(accessToken: "at-last", scope: "Scope.last", expiresIn: 86400),
                for: Fixtures.request(scopes: ["Scope.last"]))
            // The 256th commit: the sweep it started may have committed already.
            #expect((RowStore.sweepInterval...RowStore.sweepInterval + 1).contains(group.generation))
            let deadline = ContinuousClock.now + .seconds(5)
            while try payloads().contains(where: { $0.contains("at-expiring") }), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            let left = try payloads()
            #expect(!left.contains { $0.contains("at-expiring") }, "the expired access token outlived the sweep")
            #expect(left.contains { $0.contains("at-0") } && left.contains { $0.contains("at-last") })
            #expect(left.contains { $0.contains("rt-secret") }, "a refresh token is no expired access token")
        }

        /// Tables of schema version 1 are upgraded in place when an instance of this version opens
        /// them, and what they held is still there.
        @Test func tablesOfAnOlderVersionAreUpgradedInPlace() throws {
            try Self.inOwnDatabase("stc_upgrade") { database, configuration in
                let name = Support.uniqueGroup("upgrade")
                let cache = try TokenCache(
                    clientId: Fixtures.clientA,
                    group: CacheGroup.open(name, postgres: configuration, configuration: Self.configuration()))
                try cache.store(Fixtures.response(), for: Fixtures.request())
                // Back to what version 1 made: no horizon, and PostgreSQL's own storage for records.
                try Support.psql(
                    """
                    ALTER TABLE stc_groups DROP COLUMN horizon; ALTER TABLE stc_rows RESET (toast_tuple_target);
                    ALTER TABLE stc_rows ALTER COLUMN sealed SET STORAGE EXTENDED; UPDATE stc_schema SET version = 1
                    """, database: database)
                var later = configuration
                later.maximumConnections = 5  // another database object: it checks the tables again
                let reopened = try TokenCache(
                    clientId: Fixtures.clientA, group: CacheGroup.open(name, postgres: later, configuration: Self.configuration())
                )
                let account = try #require(try reopened.accounts().first)
                #expect(try reopened.accessToken(for: ["User.Read"], account: account)?.token.secret == "at-secret")
                #expect(
                    try Support.psql("SELECT version FROM stc_schema", database: database).hasPrefix("\(PostgresSchema.version)"))
                #expect(try Support.psql("SELECT horizon FROM stc_groups", database: database).hasPrefix("0"))
                #expect(try Self.recordStorage(in: database) == "e|{toast_tuple_target=8160}")
            }
        }

        /// A record of several kilobytes (a large access token) stays in its row, uncompressed:
        /// none goes to the TOAST table, which a partition load would read besides the row.
        @Test func aLargeRecordStaysInItsRow() throws {
            try Self.inOwnDatabase("stc_storage") { database, configuration in
                let cache = try TokenCache(
                    clientId: Fixtures.clientA,
                    group: CacheGroup.open(
                        Support.uniqueGroup("storage"), postgres: configuration, configuration: Self.configuration()))
                // Random, so that it would not compress either.
                let large = (0..<4_000).map { _ in String(UInt8.random(in: 0...15), radix: 16) }.joined()
                try cache.store(Fixtures.response(accessToken: large), for: Fixtures.request())
                let account = try #require(try cache.accounts().first)
                #expect(try cache.accessToken(for: ["User.Read"], account: account)?.token.secret == large)
                #expect(try Self.recordStorage(in: database) == "e|{toast_tuple_target=8160}")
                let sizes = try Support.psql(
                    """
                    SELECT max(octet_length(sealed)) > 4000, pg_relation_size(reltoastrelid)
                    FROM stc_rows, pg_class WHERE relname = 'stc_rows' GROUP BY reltoastrelid
                    """, database: database)
                #expect(sizes.hasPrefix("t|0"), "the large record went to the TOAST table: \(sizes)")
            }
        }

        /// Runs `body` with a configuration for a database of its own (owned by the tests' role),
        /// named after `prefix`, and drops the database afterwards.
        private static func inOwnDatabase(
            _ prefix: String, _ body: (_ database: String, _ configuration: PostgresStoreConfiguration) throws -> Void
        ) throws {
            let database = "\(prefix)_\(UUID().uuidString.prefix(8).lowercased())"
            try Support.psql("CREATE DATABASE \(database) OWNER stc", database: "postgres")
            defer { _ = try? Support.psql("DROP DATABASE \(database) WITH (FORCE)", database: "postgres") }
            var configuration = try PostgresStoreConfiguration(url: Support.socketURL())
            configuration.database = database
            try body(database, configuration)
        }

        /// How `stc_rows` stores its records: the storage of `sealed` and the table's options.
        private static func recordStorage(in database: String) throws -> String {
            try Support.psql(
                """
                SELECT attstorage, reloptions FROM pg_attribute JOIN pg_class ON attrelid = pg_class.oid
                WHERE relname = 'stc_rows' AND attname = 'sealed'
                """, database: database
            ).trimmingCharacters(in: .whitespacesAndNewlines)
        }

        // MARK: When the database refuses

        /// Refused each time, as an app retrying would be, and leaving no thread behind: the
        /// process has one database thread, however many opens failed.
        @Test func aWrongPasswordIsADatabaseFailureThatNamesNoPassword() throws {
            var configuration = try PostgresStoreConfiguration(url: Support.tcpURL())
            configuration.password = "not-the-password-3141"
            func databaseThreads() throws -> Int {
                try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").filter { task in
                    let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
                    return name?.trimmingCharacters(in: .whitespacesAndNewlines) == DatabaseThread.name
                }.count
            }
            _ = try Support.socketDatabase()  // the process's thread runs
            let before = try databaseThreads()
            for attempt in 0..<3 {
                let error = #expect(throws: TokenCacheError.self) {
                    _ = try CacheGroup.open(
                        Support.uniqueGroup("password-\(attempt)"), postgres: configuration, configuration: Self.configuration())
                }
                #expect(error?.code == .databaseFailure, "\(String(describing: error))")
                #expect(error?.message.contains("refused the login") == true, "\(String(describing: error))")
                #expect(error.map { !$0.message.contains("not-the-password-3141") } ?? false)
            }
            #expect(try databaseThreads() == before, "database threads: \(before) before the opens")
            #expect(before == 1)
        }

        /// A port where nothing listens (refused at once), and one where a socket listens but never
        /// answers (the connection hangs): both `.databaseUnavailable`, neither past the timeout.
        @Test func aServerThatIsNotThereOrDoesNotAnswerIsUnavailableWithinTheTimeout() throws {
            let silent = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(silent) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            try withUnsafeMutablePointer(to: &address) { pointer in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    try #require(bind(silent, address, length) == 0 && listen(silent, 8) == 0)
                    try #require(getsockname(silent, address, &length) == 0)
                }
            }
            let silentPort = Int(UInt16(bigEndian: address.sin_port))
            for port in [1, silentPort] {
                var configuration = try PostgresStoreConfiguration(url: "postgres://stc:x@127.0.0.1:\(port)/stc?sslmode=disable")
                configuration.timeout = .seconds(2)
                let started = ContinuousClock.now
                let error = #expect(throws: TokenCacheError.self, "port \(port)") {
                    _ = try CacheGroup.open(
                        Support.uniqueGroup("absent"), postgres: configuration, configuration: Self.configuration())
                }
                #expect(error?.code == .databaseUnavailable, "port \(port): \(String(describing: error))")
                #expect(ContinuousClock.now - started < .seconds(4), "port \(port): the open waited past its timeout")
            }
        }

        /// A table dropped under a running instance: its next write is a typed error that says what
        /// happened and what to do (nothing is kept: this is no outage), and its lookups of what it
        /// holds are still served.
        @Test func aTableDroppedWhileRunningIsATypedError() throws {
            try Self.inOwnDatabase("stc_dropped") { database, configuration in
                let group = try CacheGroup.open(
                    Support.uniqueGroup("dropped"), postgres: configuration, configuration: Self.configuration())
                let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
                try cache.store(Fixtures.response(), for: Fixtures.request())
                let account = try #require(try cache.accounts().first)
                try Support.psql("DROP TABLE stc_rows", database: database)
                var error: TokenCacheError?
                do {
                    try cache.store(
                        Fixtures.response(accessToken: "at-after-drop", scope: "Mail.Read"),
                        for: Fixtures.request(scopes: ["Mail.Read"]))
                } catch let caught as TokenCacheError {
                    error = caught
                }
                #expect(error?.code == .databaseFailure, "\(String(describing: error))")
                #expect(
                    error?.message.contains("missing") == true && error?.message.contains("dropped") == true,
                    "\(String(describing: error))")
                #expect(group.pendingWrites == 0)
                #expect(try cache.accessToken(for: ["User.Read"], account: account)?.token.secret == "at-secret")
            }
        }

        /// Tables made by a newer version of the library are refused, and left as they are.
        @Test func aNewerSchemaIsUnsupportedFormat() throws {
            try Self.inOwnDatabase("stc_newer") { database, configuration in
                _ = try CacheGroup.open(
                    Support.uniqueGroup("newer"), postgres: configuration, configuration: Self.configuration())
                try Support.psql("UPDATE stc_schema SET version = 99", database: database)
                var other = configuration
                other.maximumConnections = 3  // another configuration: another database object, which checks again
                let error = #expect(throws: TokenCacheError.self) {
                    _ = try CacheGroup.open(Support.uniqueGroup("newer"), postgres: other, configuration: Self.configuration())
                }
                #expect(error?.code == .unsupportedFormat, "\(String(describing: error))")
                #expect(try Support.psql("SELECT version FROM stc_schema", database: database).hasPrefix("99"))
            }
        }

        /// The README's SQL for a DBA, run as it stands: a role with only those grants opens a group,
        /// writes and reads it, in tables the DBA made.
        @Test func theReadmesGrantsAreEnough() throws {
            try Self.inDBADatabase { _, configuration, sql in
                let group = try CacheGroup.open(
                    Support.uniqueGroup("dba"), postgres: configuration, configuration: Self.configuration())
                let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
                try cache.store(Fixtures.response(), for: Fixtures.request())
                let account = try #require(try cache.accounts().first)
                #expect(try cache.accessToken(for: ["User.Read"], account: account)?.token.secret == "at-secret")
                // And the README's tables are the library's, statement for statement.
                let squash = { (text: String) in text.filter { !$0.isWhitespace } }
                #expect(sql.contains("INSERT INTO stc_schema (version) VALUES (\(PostgresSchema.version));"))
                for statement in PostgresSchema.statements {
                    #expect(squash(sql).contains(squash(statement)), "\(statement)")
                }
            }
        }

        /// Version 3 tables a DBA made, opened by a role that may not upgrade them: the role (and a
        /// tool that only reads) uses them as they are, the version stays, and the warning names the statements (the README's
        /// too) that their owner then runs to upgrade them.
        @Test func aRoleThatMayNotUpgradeUsesTheTablesAsTheyAre() throws {
            try Self.inDBADatabase { database, configuration, _ in
                try Support.psql(
                    """
                    ALTER TABLE stc_rows RESET (toast_tuple_target); ALTER TABLE stc_rows ALTER COLUMN sealed SET STORAGE EXTENDED;
                    UPDATE stc_schema SET version = 3
                    """, database: database)
                let log = CapturedLog()
                var cacheConfiguration = Self.configuration()
                cacheConfiguration.logger = log.logger
                let name = Support.uniqueGroup("dba-old")
                let cache = try TokenCache(
                    clientId: Fixtures.clientA,
                    group: CacheGroup.open(name, postgres: configuration, configuration: cacheConfiguration))
                try cache.store(Fixtures.response(), for: Fixtures.request())
                let account = try #require(try cache.accounts().first)
                #expect(try cache.accessToken(for: ["User.Read"], account: account)?.token.secret == "at-secret")
                #expect(try Support.psql("SELECT version FROM stc_schema", database: database).hasPrefix("3"))
                #expect(try Self.recordStorage(in: database) == "x|")
                var reading = configuration
                reading.maximumConnections = 7  // a database object of a tool that only reads
                let tool = try TokenCache(
                    clientId: Fixtures.clientA,
                    group: CacheGroup.openExisting(name, postgres: reading, configuration: Self.configuration()))
                #expect(try tool.accessToken(for: ["User.Read"], account: account)?.token.secret == "at-secret")
                let warning = try #require(log.messages.first { $0.level == .warning && $0.message.contains("stc_schema") })
                let statements = try #require(warning.message.firstRange(of: "run: ").map { warning.message[$0.upperBound...] })
                let readme = try String(contentsOf: PackageRoot.url.appendingPathComponent("README.md"), encoding: .utf8)
                for statement in statements.split(separator: "; ") {
                    #expect(readme.contains(statement + ";"), "the README's upgrade for DBAs lacks \(statement)")
                }
                try Support.psql(String(statements), database: database)
                var later = configuration
                later.maximumConnections = 6  // another database object: it checks the tables again
                let reopened = try TokenCache(
                    clientId: Fixtures.clientA, group: CacheGroup.open(name, postgres: later, configuration: Self.configuration())
                )
                #expect(try reopened.accessToken(for: ["User.Read"], account: account)?.token.secret == "at-secret")
                #expect(
                    try Support.psql("SELECT version FROM stc_schema", database: database).hasPrefix("\(PostgresSchema.version)"))
                #expect(try Self.recordStorage(in: database) == "e|{toast_tuple_target=8160}")
            }
        }

        /// Runs `body` in a database of its own where the README's SQL for a DBA ran as it stands,
        /// as a role with only the README's grants: `body` gets the database, a configuration that
        /// logs in as that role, and the SQL. The database and the role are dropped afterwards.
        private static func inDBADatabase(
            _ body: (_ database: String, _ configuration: PostgresStoreConfiguration, _ sql: String) throws -> Void
        ) throws {
            let readme = try String(contentsOf: PackageRoot.url.appendingPathComponent("README.md"), encoding: .utf8)
            let block = try #require(readme.firstRange(of: "```sql\n").map { readme[$0.upperBound...] })
            let sql = String(try #require(block.firstRange(of: "```").map { block[..<$0.lowerBound] }))
            let suffix = UUID().uuidString.prefix(8).lowercased()
            let (role, database, password) = ("tokens_\(suffix)", "stc_dba_\(suffix)", "pw-\(suffix)")
            try Support.psql("CREATE DATABASE \(database)", database: "postgres")
            defer {
                _ = try? Support.psql("DROP DATABASE \(database) WITH (FORCE)", database: "postgres")
                _ = try? Support.psql("DROP ROLE \(role)", database: "postgres")
            }
            try Support.psql(
                sql.replacingOccurrences(of: "ROLE tokens", with: "ROLE \(role)")
                    .replacingOccurrences(of: "TO tokens", with: "TO \(role)")
                    .replacingOccurrences(of: "'...'", with: "'\(password)'"),
                database: database)
            var configuration = try PostgresStoreConfiguration(url: Support.tcpURL())
            configuration.username = role
            configuration.password = password
            configuration.database = database
            try body(database, configuration, sql)
        }

        @Test func aGroupWithoutAKeySourceIsRefused() throws {
            let error = #expect(throws: TokenCacheError.self) {
                _ = try CacheGroup.open(
                    Support.uniqueGroup("keyless"), postgres: PostgresStoreConfiguration(url: Support.socketURL()),
                    configuration: CacheConfiguration())
            }
            #expect(error?.code == .invalidArgument)
        }

        @Test func databaseURLsParseAsLibpqWritesThem() throws {
            let tcp = try PostgresStoreConfiguration(
                url: "postgresql://app%40corp:p%3Ass@db.internal:6432/tokens?sslmode=require")
            #expect(tcp.endpoint == .tcp(host: "db.internal", port: 6432))
            #expect(tcp.username == "app@corp" && tcp.password == "p:ss" && tcp.database == "tokens" && tcp.tls == .require)
            #expect(tcp.description == "postgres://app@corp@db.internal:6432/tokens")
            let socket = try PostgresStoreConfiguration(url: "postgres://stc@/stc?host=/run/postgresql&port=5433")
            #expect(socket.endpoint == .unixSocket(path: "/run/postgresql/.s.PGSQL.5433") && socket.tls == .disable)
            for bad in [
                "mysql://x@y/z", "postgres://db.internal/tokens", "postgres://u@h:99999/d", "postgres://u@h/d?sslmode=sometimes",
                "postgres://u:ab%+4cd@h/d", "postgres://u:ab%4@h/d", "postgres://u:ab%zz@h/d",
            ] {
                let error = #expect(throws: TokenCacheError.self, "\(bad)") { try PostgresStoreConfiguration(url: bad) }
                #expect(error?.code == .invalidArgument)
            }
            // A ? the password did not percent-encode starts the query: what follows it is the rest
            // of the password, which the error must not quote.
            let unescaped = #expect(throws: TokenCacheError.self) {
                try PostgresStoreConfiguration(url: "postgres://app:pass?word-rest@db.internal/tokens")
            }
            #expect(unescaped?.code == .invalidArgument)
            #expect(unescaped.map { !$0.message.contains("word-rest") } == true, "\(String(describing: unescaped))")
        }
    }

    /// A ``RowDatabase`` over another that counts the commits made through it (in one round trip,
    /// and locking), whose group head reads fail while ``failingHeads`` is above zero (each
    /// failure counts it down), which hears no announcement while ``isDeaf``, through which a
    /// test announces what it likes, and which runs ``afterSweepCandidates`` (once) between a
    /// sweep's read of its candidates and its commit.
    final class InterposedRowDatabase: RowDatabase {
        private struct State {
            var oneRoundTrip = 0
            var locking = 0
            var failingHeads = 0
            var isDeaf = false
            var handler: (@Sendable (RowAnnouncement) -> Void)?
            var afterSweepCandidates: (@Sendable () throws -> Void)?
        }

        private let database: any RowDatabase
        private let state = Mutex(State())

        init(_ database: any RowDatabase) { self.database = database }

        /// One-round-trip commits that landed, and locking commits.
        func counts() -> (Int, Int) { state.withLock { ($0.oneRoundTrip, $0.locking) } }

        var failingHeads: Int {
            get { state.withLock { $0.failingHeads } }
            set { state.withLock { $0.failingHeads = newValue } }
        }

        var isDeaf: Bool {
            get { state.withLock { $0.isDeaf } }
            set { state.withLock { $0.isDeaf = newValue } }
        }

        /// Hands `announcement` to the process's listener, as the database's would.
        func announce(_ announcement: RowAnnouncement) {
            state.withLock { $0.handler }?(announcement)
        }

        var location: String { database.location }
        func head(of group: [UInt8]) throws -> RowGroupHead? {
            let fails = state.withLock { state -> Bool in
                guard state.failingHeads > 0 else { return false }
                state.failingHeads -= 1
                return true
            }
            if fails { throw TokenCacheError(.databaseUnavailable, "a test's database does not answer yet") }
            return try database.head(of: group)
        }
        func createGroup(_ group: [UInt8], header: [UInt8], epoch: UInt64) throws -> RowGroupHead {
            try database.createGroup(group, header: header, epoch: epoch)
        }
        func rows(of group: [UInt8], epoch: UInt64, after version: UInt64, selection: RowSelection) throws
            -> (RowGroupHead, [SealedRow])
        {
            try database.rows(of: group, epoch: epoch, after: version, selection: selection)
        }
        func commit(
            _ group: [UInt8], epoch: UInt64, after version: UInt64, selection: RowSelection,
            _ body: (RowGroupHead, [SealedRow]) throws -> RowCommit
        ) throws -> RowGroupHead {
            state.withLock { $0.locking += 1 }
            return try database.commit(group, epoch: epoch, after: version, selection: selection, body)
        }
        func commit(_ group: [UInt8], epoch: UInt64, ifStillAt version: UInt64, rows: [SealedRow]) throws -> RowGroupHead? {
            let head = try database.commit(group, epoch: epoch, ifStillAt: version, rows: rows)
            if head != nil { state.withLock { $0.oneRoundTrip += 1 } }
            return head
        }
        func sweepCandidates(of group: [UInt8], expiredBefore now: Int64, idleBefore: Int64?, limit: Int) throws
            -> RowSweepCandidates
        {
            let candidates = try database.sweepCandidates(of: group, expiredBefore: now, idleBefore: idleBefore, limit: limit)
            try state.withLock { state in
                defer { state.afterSweepCandidates = nil }; return state.afterSweepCandidates
            }?()
            return candidates
        }

        /// What runs once, the next time a sweep has read its candidates.
        var afterSweepCandidates: (@Sendable () throws -> Void)? {
            get { state.withLock { $0.afterSweepCandidates } }
            set { state.withLock { $0.afterSweepCandidates = newValue } }
        }
        func lock(_ id: Int64, timeout: Duration) async throws -> @Sendable () async -> Void {
            try await database.lock(id, timeout: timeout)
        }
        func listen(_ handler: @escaping @Sendable (RowAnnouncement) -> Void) {
            state.withLock { $0.handler = handler }
            database.listen { [self] announcement in
                guard !isDeaf else { return }
                handler(announcement)
            }
        }
    }
#endif
