#if canImport(SecureTokenCachePostgres)
    import Foundation
    import HashTreeCollections
    import Synchronization
    import TestSupport
    import Testing

    @testable import SecureTokenCache
    @testable import SecureTokenCachePostgres

    /// A fleet's group with a memory limit: each instance keeps in memory the partitions its lookups
    /// ask for (the first level), loaded on a miss, coherent with the other instances' commits to
    /// them, and dropped from memory past the limit; and the sweeps that delete expired access
    /// tokens and idle partitions from the database.
    @Suite(
        .serialized,
        .tags(.postgres),
        .timeLimit(.minutes(3)),
        .enabled(if: PostgresTestSupport.required, "needs the server of scripts/postgres (STC_POSTGRES_REQUIRED=1)")
    )
    struct PostgresFirstLevelTests {
        typealias Support = PostgresTestSupport

        static func configuration(memoryLimit: Int? = 4 << 20) -> CacheConfiguration {
            var configuration = CacheConfiguration(keySource: .passphrase("fleet passphrase"))
            configuration.memoryLimit = memoryLimit
            return configuration
        }

        static func uid(_ user: Int) -> String { String(format: "00000000-0000-0000-3333-%012d", user) }

        /// Stores a token for user `user` as a web app does, without marking the user signed in
        /// (``aUsersSignInStateTravelsWithTheUsersPartition()`` does).
        static func store(_ cache: TokenCache, user: Int, token: String? = nil) throws {
            try cache.store(
                Fixtures.response(uid: uid(user), username: "user\(user)@contoso.com", accessToken: token ?? "at-\(user)"),
                for: Fixtures.request(), signIn: false)
        }

        /// Stores a token for each of `users` users in the group `name`, from an instance without a
        /// limit; returns the name and what one user costs a bounded group.
        static func fill(_ name: String, users: Int) throws -> (name: String, perUser: Int) {
            let whole = {
                try CacheGroup.open(name, database: Support.socketDatabase(), configuration: configuration(memoryLimit: nil))
            }
            let writer = try TokenCache(clientId: Fixtures.clientA, group: whole())
            for user in 0..<users { try store(writer, user: user) }
            return (name, try whole().index().entries.values.reduce(0) { $0 + CacheBound.cost($1) } / users)
        }

        /// User `user`'s account, as a server that knows its callers' home account ids makes it.
        static func account(_ user: Int) -> Account {
            Account(fields: [
                "home_account_id": .string("\(uid(user)).\(Fixtures.tenant)"),
                "environment": .string("login.microsoftonline.com"),
                "realm": .string(Fixtures.tenant), "local_account_id": .string(uid(user)),
                "username": .string("user\(user)@contoso.com"), "authority_type": .string("MSSTS"),
            ])
        }

        /// An instance opened with a limit holds nothing of the group's users until a lookup asks
        /// for one; that lookup finds the token another instance stored, in one load.
        @Test func aLookupThatMissesLoadsItsPartitionAndOnlyThat() throws {
            let name = Support.uniqueGroup("first-level")
            let writer = try TokenCache(
                clientId: Fixtures.clientA,
                group: CacheGroup.open(
                    name, database: Support.socketDatabase(), configuration: Self.configuration(memoryLimit: nil)))
            for user in 0..<20 { try Self.store(writer, user: user) }
            let group = try CacheGroup.open(name, database: Support.tcpDatabase(), configuration: Self.configuration())
            let reader = try TokenCache(clientId: Fixtures.clientA, group: group)
            #expect(try group.index().accountsByHome.count == 0, "nothing of any user before a lookup asks")
            #expect(try reader.accessToken(for: ["User.Read"], account: Self.account(7))?.token.secret == "at-7")
            let held = try group.index()
            #expect(held.accountsByHome.count == 1)
            #expect(
                held.entries.values.allSatisfy {
                    CachePartition(of: $0.entry).map { $0 == .user(Self.account(7).homeAccountId) } ?? true
                })
            // A user nobody stored is a miss, and leaves nothing kept: the partition is asked for
            // again next time, and a stream of unknown callers costs no memory.
            let store = try #require(group.partial)
            #expect(try reader.accessToken(for: ["User.Read"], account: Self.account(99)) == nil)
            #expect(try group.index().count == held.count)
            #expect(!store.keeps(CachePartition.user(Self.account(99).homeAccountId).storageKey))
            #expect(store.keeps(CachePartition.user(Self.account(7).homeAccountId).storageKey))
        }

        /// Once a partition is in memory, a commit of another instance to it reaches this instance
        /// (a sign-out is never served after its announcement), and commits to partitions this
        /// instance does not hold leave its generation where it is: its lookups stay local.
        @Test func aKeptPartitionFollowsOtherInstancesAndOthersDoNotMoveIt() async throws {
            let name = Support.uniqueGroup("first-level-coherent")
            let writerGroup = try CacheGroup.open(
                name, database: Support.socketDatabase(), configuration: Self.configuration(memoryLimit: nil))
            let writer = try TokenCache(clientId: Fixtures.clientA, group: writerGroup)
            try Self.store(writer, user: 1)
            let group = try CacheGroup.open(name, database: Support.tcpDatabase(), configuration: Self.configuration())
            // The first read once the process listens moves what it keeps as if every partition
            // changed: the commits below start after it.
            try Support.waitUntilListening(Support.tcpDatabase())
            let watch = try #require(group.partial as? RowStore).watch
            let reader = try TokenCache(clientId: Fixtures.clientA, group: group)
            #expect(try reader.accessToken(for: ["User.Read"], account: Self.account(1))?.token.secret == "at-1")
            let kept = group.generation
            // Commits to other users: announced, but not to this instance's partitions.
            for user in 2..<30 { try Self.store(writer, user: user) }
            #expect(Support.waitUntil(watch, hasHeardThrough: writerGroup.generation), "the commits were not all heard")
            #expect(group.generation == kept, "commits to partitions this instance does not hold moved its generation")
            // A refresh of user 1 elsewhere is seen here.
            try Self.store(writer, user: 1, token: "at-1-renewed")
            try await Self.waitUntil {
                try reader.accessToken(for: ["User.Read"], account: Self.account(1))?.token.secret == "at-1-renewed"
            }
            // And a sign-out elsewhere.
            try writer.signOut(Self.account(1))
            try await Self.waitUntil { try reader.accessToken(for: ["User.Read"], account: Self.account(1)) == nil }
        }

        /// A write to a partition the instance does not hold loads it first, so the write sees what
        /// the partition holds (the user's account stays one entry, the old token is replaced).
        @Test func aWriteToAPartitionNotInMemoryLoadsItFirst() throws {
            let name = Support.uniqueGroup("first-level-write")
            let other = try TokenCache(
                clientId: Fixtures.clientA,
                group: CacheGroup.open(
                    name, database: Support.socketDatabase(), configuration: Self.configuration(memoryLimit: nil)))
            try Self.store(other, user: 5)
            let group = try CacheGroup.open(name, database: Support.tcpDatabase(), configuration: Self.configuration())
            let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
            try Self.store(cache, user: 5, token: "at-5-second")
            let held = try group.index()
            let tokens = held.entries.values.filter { $0.id.kind == .accessToken }
            #expect(tokens.count == 1, "the write replaced the token it did not hold in memory")
            #expect(try cache.accessToken(for: ["User.Read"], account: Self.account(5))?.token.secret == "at-5-second")
            let whole = try CacheGroup.open(
                name, database: Support.socketDatabase(), configuration: Self.configuration(memoryLimit: nil))
            #expect(try whole.index().entries.values.filter { $0.id.kind == .accessToken }.count == 1)
        }

        /// With 400 users in the database and a limit that holds about 50, the instance stays under
        /// its limit while lookups walk through every user, and each lookup still finds its token.
        @Test func theFirstLevelStaysUnderItsLimitAndDropsTheLeastRecentlyUsed() throws {
            let (name, perUser) = try Self.fill(Support.uniqueGroup("first-level-bound"), users: 400)
            let limit = perUser * 50
            let group = try CacheGroup.open(
                name, database: Support.tcpDatabase(), configuration: Self.configuration(memoryLimit: limit))
            let reader = try TokenCache(clientId: Fixtures.clientA, group: group)
            for round in 0..<2 {
                for user in 0..<400 {
                    let found = try reader.accessToken(for: ["User.Read"], account: Self.account(user))
                    #expect(found?.token.secret == "at-\(user)", "round \(round), user \(user)")
                    let index = try group.index()
                    let held = index.entries.values.reduce(0) { $0 + CacheBound.cost($1) }
                    #expect(held <= limit, "round \(round), user \(user): \(held) bytes held, limit \(limit)")
                    // The uses of the entries dropped from memory went with them.
                    #expect(group.bound?.trackedUses ?? .max <= index.count, "round \(round), user \(user)")
                }
            }
            // The most recently used are the ones kept.
            let kept = Set(try group.index().accountsByHome.keys.map(\.value))
            #expect(kept.contains(Self.account(399).homeAccountId.normalised))
            #expect(!kept.contains(Self.account(0).homeAccountId.normalised))
        }

        /// What an instance with a limit counts (``CacheGroup/memoryUse``) is what its first level
        /// holds, entry for entry, through partition loads, drops, its own writes and sign-outs, and
        /// another instance's commits to partitions it holds. A drop chooses from that count without
        /// visiting every entry: a count that drifted would hold more than the limit, or drop a
        /// partition and keep some of its entries, which no commit would then reach.
        @Test func whatTheFirstLevelCountsIsWhatItHolds() async throws {
            let (name, perUser) = try Self.fill(Support.uniqueGroup("first-level-count"), users: 90)
            let other = try TokenCache(
                clientId: Fixtures.clientA,
                group: CacheGroup.open(
                    name, database: Support.socketDatabase(), configuration: Self.configuration(memoryLimit: nil)))
            let limit = perUser * 20
            let group = try CacheGroup.open(
                name, database: Support.tcpDatabase(), configuration: Self.configuration(memoryLimit: limit))
            let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
            func expectCounted(_ step: String) throws {
                let index = try group.index()
                let held = index.entries.values.reduce(0) { $0 + CacheBound.cost($1) }
                #expect(group.memoryUse == held, "after \(step)")
                #expect(held <= limit, "after \(step)")
                let partitioned = index.entries.values.filter { CachePartition(of: $0.entry) != nil }.count
                #expect(group.bound?.trackedUses == partitioned, "after \(step): every entry's use is its partition's")
            }
            var signedOut: Set<Int> = []
            for user in 0..<90 {
                #expect(try cache.accessToken(for: ["User.Read"], account: Self.account(user))?.token.secret == "at-\(user)")
                try expectCounted("the lookup of user \(user)")
                if user % 7 == 3 {
                    // A refresh replaces the token in memory.
                    try Self.store(cache, user: user, token: "at-\(user)")
                    try expectCounted("a refresh of user \(user)")
                }
                if user % 11 == 5 {
                    try cache.signOut(Self.account(user))
                    signedOut.insert(user)
                    try expectCounted("the sign-out of user \(user)")
                }
                if user % 13 == 8 {
                    // A write for a user not in memory loads the user first.
                    try Self.store(cache, user: user + 1, token: "at-\(user + 1)")
                    try expectCounted("a write for user \(user + 1), not in memory")
                }
                if user % 9 == 4, !signedOut.contains(user) {
                    // Another instance's refresh of a user held here is caught up with.
                    try Self.store(other, user: user, token: "at-\(user)-elsewhere")
                    try await Self.waitUntil {
                        try cache.accessToken(for: ["User.Read"], account: Self.account(user))?.token.secret
                            == "at-\(user)-elsewhere"
                    }
                    try expectCounted("another instance's refresh of user \(user)")
                }
            }
            let kept = Set(try group.index().accountsByHome.keys.map(\.value))
            #expect(kept.contains(Self.account(89).homeAccountId.normalised))
            #expect(!kept.contains(Self.account(0).homeAccountId.normalised), "nothing was dropped")
        }

        /// The answers a cache remembers for many users in turn let go of the tokens the first
        /// level dropped: past the limit, the first users' tokens are freed, and a lookup of one of
        /// them loads it again and finds it.
        @Test func rememberedAnswersKeepNoTokenTheFirstLevelDropped() throws {
            let (name, perUser) = try Self.fill(Support.uniqueGroup("first-level-answers"), users: 300)
            let group = try CacheGroup.open(
                name, database: Support.tcpDatabase(), configuration: Self.configuration(memoryLimit: perUser * 50))
            let reader = try TokenCache(clientId: Fixtures.clientA, group: group)
            final class Held: @unchecked Sendable { weak var storage: AnyObject? }
            var first: [Held] = []
            for user in 0..<300 {
                // Twice: the second answer is a remembered one.
                for _ in 0..<2 {
                    let found = try reader.accessToken(for: ["User.Read"], account: Self.account(user))
                    #expect(found?.token.secret == "at-\(user)", "user \(user)")
                    if user < 100, first.count == user, let found {
                        let held = Held()
                        held.storage = found.token.storage
                        first.append(held)
                    }
                }
            }
            let kept = Set(try group.index().accountsByHome.keys.map(\.value))
            try #require(!kept.contains(Self.account(0).homeAccountId.normalised), "user 0 was not dropped")
            let stillInMemory = (0..<100).filter { first[$0].storage != nil }
            #expect(stillInMemory.isEmpty, "tokens of dropped users still in memory: \(stillInMemory)")
            #expect(try reader.accessToken(for: ["User.Read"], account: Self.account(0))?.token.secret == "at-0")
        }

        /// A user's sign-in state is stored in the user's partition: an instance holds where a user
        /// stands with a client only while it holds the user, reads it with the user's tokens, and
        /// lets it go when it drops the user; the client's current and previous account are every
        /// instance's.
        @Test func aUsersSignInStateTravelsWithTheUsersPartition() throws {
            let name = Support.uniqueGroup("first-level-sign-in")
            let whole = try CacheGroup.open(
                name, database: Support.socketDatabase(), configuration: Self.configuration(memoryLimit: nil))
            let writer = try TokenCache(clientId: Fixtures.clientA, group: whole)
            // More users than a client's record lists, so that the writer, which holds the whole
            // group, writes a record per account too.
            let users = IndexTransaction.listingLimit + 36
            for user in 0..<users {
                try writer.store(
                    Fixtures.response(uid: Self.uid(user), username: "user\(user)@contoso.com", accessToken: "at-\(user)"),
                    for: Fixtures.request())
            }
            try writer.signOut(Self.account(1))
            let perUser = try whole.index().entries.values.reduce(0) { $0 + CacheBound.cost($1) } / users
            let group = try CacheGroup.open(
                name, database: Support.tcpDatabase(), configuration: Self.configuration(memoryLimit: perUser * 20))
            let reader = try TokenCache(clientId: Fixtures.clientA, group: group)
            let home = { (user: Int) in Self.account(user).homeAccountId.normalised }
            let state = { try group.index().clientStates[Fixtures.clientA] }
            #expect(try state()?.signedIn.isEmpty != false && state()?.signedOut.isEmpty != false)
            #expect(try state()?.current == home(users - 1) && state()?.previous == home(users - 2))

            #expect(try reader.accessToken(for: ["User.Read"], account: Self.account(0))?.token.secret == "at-0")
            #expect(try state()?.standing(of: home(0)) == .signedIn)
            #expect(try group.keep(.user(Self.account(1).homeAccountId)))
            #expect(try state()?.standing(of: home(1)) == .signedOut)
            #expect(try state()?.signedIn.count == 1, "only the users held")

            // Past the limit the first users are dropped, and their standing with them.
            for user in 2..<users { _ = try reader.accessToken(for: ["User.Read"], account: Self.account(user)) }
            let held = Set(try group.index().accountsByHome.keys.map(\.value))
            try #require(!held.contains(home(0)), "user 0 was not dropped")
            #expect(try state()?.standing(of: home(0)) == nil)
            let standing = try #require(try state())
            #expect(Set(standing.signedIn) == held.intersection(Set((2..<users).map(home))))
            // Read again with the user.
            _ = try reader.accessToken(for: ["User.Read"], account: Self.account(0))
            #expect(try state()?.standing(of: home(0)) == .signedIn)
        }

        /// A sign-out, a wipe and a clear of a partition on an instance that does not hold the user
        /// remove the user from the database, not only from memory; a clear of the whole group is
        /// refused there (it needs the whole group), and works on an instance that holds it all.
        @Test func signOutsAndClearsReachPartitionsNotInMemory() throws {
            let name = Support.uniqueGroup("first-level-clear")
            let whole = try CacheGroup.open(
                name, database: Support.socketDatabase(), configuration: Self.configuration(memoryLimit: nil))
            let writer = try TokenCache(clientId: Fixtures.clientA, group: whole)
            for user in 1...4 { try Self.store(writer, user: user) }
            let fresh = { try CacheGroup.open(name, database: Support.tcpDatabase(), configuration: Self.configuration()) }
            let tokensOf = { (user: Int) in
                try CacheGroup.open(name, database: Support.socketDatabase(), configuration: Self.configuration(memoryLimit: nil))
                    .index().entries(account: Self.account(user).homeAccountId.normalised).filter { $0.id.kind == .accessToken }
                    .count
            }
            try TokenCache(clientId: Fixtures.clientA, group: fresh()).signOut(Self.account(1))
            #expect(try tokensOf(1) == 0, "a sign-out on an instance without the user left its token in the database")
            #expect(try fresh().wipe(Self.account(2)) > 0)
            #expect(try tokensOf(2) == 0)
            let removed = try fresh().clear(.partition(Self.account(3).homeAccountId.rawValue))
            #expect(try !removed.isEmpty && tokensOf(3) == 0)
            #expect(throws: TokenCacheError.self) { try fresh().clear(.all) }
            #expect(try tokensOf(4) == 1, "the refused clear removed something")
            #expect(!(try whole.clear(.all)).isEmpty)
        }

        // MARK: Sweeps

        /// The store of group `name` in `database` whose clock stands at `now`, and whose
        /// partitions are idle after a day.
        static func sweptStore(_ name: String, on database: any RowDatabase, at now: Int64) throws -> RowStore {
            try RowStore(
                name: name, database: database,
                keyProvider: CacheConfiguration.KeySource.passphrase("fleet passphrase").makeProvider(
                    group: name, configuration: Self.configuration()),
                protectionReason: "test",
                options: RowStoreOptions(idlePartitionAge: .seconds(86400), classify: CacheGroup.rowTraits, clock: { now }))
        }

        /// A sweep deletes the access tokens whose expiry passed (and no other entry of their
        /// partition), then the partitions nobody wrote for longer than the idle age; every
        /// instance drops what it deleted.
        @Test func aSweepDeletesExpiredTokensThenIdlePartitions() async throws {
            let name = Support.uniqueGroup("sweep")
            let now = Int64(Date().timeIntervalSince1970)
            let store = try Self.sweptStore(name, on: try Support.socketDatabase(), at: now)
            let group = try CacheGroup(name: name, store: store, clock: { now })
            let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
            try cache.store(
                Fixtures.response(uid: Self.uid(1), accessToken: "at-short", expiresIn: 60), for: Fixtures.request(),
                signIn: false)
            for user in 2...3 { try Self.store(cache, user: user) }
            // Nothing expired yet, nothing idle.
            #expect(try store.sweep(now: now) == RowStore.Swept())
            // An hour later the first user's token has expired: it goes, with its deletion row.
            let swept = try store.sweep(now: now + 3600 - 300)
            #expect(swept == RowStore.Swept(expired: 1, idle: 0, partitions: 0))
            try await Self.waitUntil { try cache.accessToken(for: ["User.Read"], account: Self.account(1)) == nil }
            #expect(try cache.refreshTokens(for: Self.account(1)).count == 1, "the refresh token is not an expired token")
            // User 2's partition was last written long ago: the whole partition goes.
            try Support.psql("UPDATE stc_parts SET written_at = 0 WHERE group_id = \(Support.groupLiteral(name))")
            try Self.store(cache, user: 3, token: "at-3-again")
            let idle = try store.sweep(now: now)
            #expect(idle.idle >= 4 && idle.partitions == 2, "\(idle)")  // users 1 and 2
            try await Self.waitUntil { try cache.accounts().map(\.username).sorted() == ["user3@contoso.com"] }
            let left = try Support.psql(
                "SELECT count(*) FROM stc_parts WHERE group_id = \(Support.groupLiteral(name))"
            ).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(left == "1")
        }

        /// Instance B renews an app token past its `refresh_on` after instance A renewed it, before
        /// A's announcement reached B: B's renewal, under the lock, reads the group's head before
        /// it believes the old token still there, and asks the authority nothing.
        @Test func aRenewalAfterAnotherInstancesRenewalUnheardOfMakesNoRequest() async throws {
            let name = Support.uniqueGroup("renewal-unheard")
            let deafened = InterposedRowDatabase(try Support.socketDatabase())
            let onA = try CacheGroup.open(name, database: Support.socketDatabase(), configuration: Self.configuration())
            let onB = try CacheGroup(
                name: name,
                store: try RowStore(
                    name: name, database: deafened,
                    keyProvider: CacheConfiguration.KeySource.passphrase("fleet passphrase").makeProvider(
                        group: name, configuration: Self.configuration()),
                    protectionReason: "test", options: RowStoreOptions(classify: CacheGroup.rowTraits)))
            let endpoint = ConfidentialClientTests.CountingEndpoint.appTokens(delay: .zero, refreshIn: 1)
            let a = try ConfidentialClientTests.client(onA, endpoint)
            let b = try ConfidentialClientTests.client(onB, endpoint)
            let authority = try AppTokenTests.authority()
            let scopes = ConfidentialClientTests.graph
            let secret = ConfidentialClientTests.secret
            #expect(try await a.acquireAppToken(for: scopes, authority: authority, credential: secret).token.secret == "at-1")
            try await Self.waitUntil { try b.cache.appToken(for: scopes, authority: authority)?.token.secret == "at-1" }
            deafened.isDeaf = true
            try await Task.sleep(for: .milliseconds(1_500))
            // A serves its token past refresh_on and renews it in the background.
            _ = try await a.acquireAppToken(for: scopes, authority: authority, credential: secret)
            try await Self.waitUntil { try a.cache.appToken(for: scopes, authority: authority)?.token.secret == "at-2" }
            try #require(try b.cache.appToken(for: scopes, authority: authority)?.token.secret == "at-1")
            // B, which heard nothing, does the same.
            _ = try await b.acquireAppToken(for: scopes, authority: authority, credential: secret)
            try await Self.waitUntil { try b.cache.appToken(for: scopes, authority: authority)?.token.secret != "at-1" }
            #expect(try b.cache.appToken(for: scopes, authority: authority)?.token.secret == "at-2")
            #expect(endpoint.requests == 2)
        }

        /// A partition written by another instance after a sweep read it as idle, and before the
        /// sweep's commit: the sweep leaves it whole (the rows the write did not touch too) and
        /// does not forget it, so that a later idle sweep still finds it.
        @Test func aPartitionWrittenWhileASweepRunsIsNotSwept() throws {
            let name = Support.uniqueGroup("sweep-revived")
            let now = Int64(Date().timeIntervalSince1970)
            let database = InterposedRowDatabase(try Support.socketDatabase())
            let store = try Self.sweptStore(name, on: database, at: now)
            let cache = try TokenCache(
                clientId: Fixtures.clientA, group: try CacheGroup(name: name, store: store, clock: { now }))
            try Self.store(cache, user: 1)
            let other = try TokenCache(
                clientId: Fixtures.clientA,
                group: try CacheGroup.open(name, database: Support.socketDatabase(), configuration: Self.configuration()))
            try Support.psql("UPDATE stc_parts SET written_at = 0 WHERE group_id = \(Support.groupLiteral(name))")
            // Another scope's token for the same user: its account, refresh and ID tokens are
            // written again, its first access token is not.
            database.afterSweepCandidates = {
                try other.store(
                    Fixtures.response(
                        uid: Self.uid(1), username: "user1@contoso.com", accessToken: "at-mail", scope: "Mail.Read"),
                    for: Fixtures.request(scopes: ["Mail.Read"]), signIn: false)
            }
            let swept = try store.sweep(now: now)
            #expect(swept.idle == 0 && swept.partitions == 0, "\(swept)")
            // As a new instance finds the group.
            let later = try TokenCache(
                clientId: Fixtures.clientA,
                group: try CacheGroup.open(name, database: Support.socketDatabase(), configuration: Self.configuration()))
            #expect(try later.accessToken(for: ["User.Read"], account: Self.account(1))?.token.secret == "at-1")
            #expect(try later.accessToken(for: ["Mail.Read"], account: Self.account(1))?.token.secret == "at-mail")
            let parts = try Support.psql(
                "SELECT count(*) FROM stc_parts WHERE group_id = \(Support.groupLiteral(name))"
            ).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(parts == "1")
        }

        /// Waits until `condition` holds, for up to `seconds`.
        static func waitUntil(seconds: Int = 5, _ condition: () throws -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while ContinuousClock.now < deadline {
                if try condition() { return }
                try await Task.sleep(for: .milliseconds(10))
            }
            Issue.record("the condition never held")
        }
    }
#endif
