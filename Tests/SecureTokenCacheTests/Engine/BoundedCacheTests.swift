import CoreMetrics
import MetricsTestKit
import Synchronization
import Testing

@testable import SecureTokenCache

/// A server's bounded cache (`CacheConfiguration.memoryLimit`): it stays under its limit,
/// evicts expired tokens first and then the least recently used partitions, never what a write
/// just stored, counts what it does, and is refused for a durable store.
@Suite(.timeLimit(.minutes(2))) struct BoundedCacheTests {
    /// The metrics every test reads, bootstrapped once for the process (swift-metrics allows one
    /// bootstrap); each test's group has a name of its own, so counters never mix.
    static let metrics: TestMetrics = {
        let metrics = TestMetrics()
        MetricsSystem.bootstrap(metrics)
        return metrics
    }()

    static let webAPI = OnBehalfOfTests.webAPI

    /// A clock the test moves.
    final class Clock: Sendable {
        let now = Mutex<Int64>(1_700_000_000)
    }

    /// A bounded group on `clock`.
    static func group(limit: Int, clock: Clock = Clock()) throws -> CacheGroup {
        _ = metrics
        let name = "bounded-\(UInt64.random(in: 0...UInt64.max))"
        return try CacheGroup(
            name: name, store: MemoryStore(name: name), clock: { clock.now.withLock { $0 } }, memoryLimit: limit)
    }

    /// Caller `number`'s object id.
    static func user(_ number: Int) -> String { "00000000-0000-0000-2222-" + String(number).leftPadded(to: 12) }

    static func caller(_ number: Int) throws -> UserAssertion {
        try UserAssertion(Fixtures.jwt(["oid": .string(user(number)), "tid": .string(Fixtures.tenant)]))
    }

    /// Stores caller `number`'s on-behalf-of token (with the user's id token and account, as
    /// Entra ID answers).
    static func storeToken(of number: Int, in cache: TokenCache) throws {
        try cache.storeOnBehalfOfToken(
            try OnBehalfOfTests.response("at-obo-\(number)", user: user(number)),
            for: try OnBehalfOfTests.request(), assertion: try caller(number))
    }

    static func token(of number: Int, in cache: TokenCache) throws -> String? {
        try cache.onBehalfOfToken(
            for: OnBehalfOfTests.downstream, assertion: try caller(number), authority: try OnBehalfOfTests.authority())?
            .token.secret
    }

    @Test func theGroupStaysUnderItsLimitAndEvictsTheLeastRecentlyUsedPartitionsFirst() throws {
        let limit = 512 * 1024
        let group = try Self.group(limit: limit)
        let cache = try TokenCache(clientId: Self.webAPI, group: group)
        for number in 0..<400 {
            try Self.storeToken(of: number, in: cache)
            // Caller 0 calls before every request of another caller: always the most recent.
            #expect(try Self.token(of: 0, in: cache) == "at-obo-0")
            #expect(group.bound?.accountedBytes ?? .max <= limit)
        }
        let kept = try group.partitions().filter { $0.partition.holder == .onBehalfOf }
        #expect(kept.count < 400)
        #expect(kept.count > 10)
        // What is kept is the most recent callers (and caller 0); the oldest are gone.
        #expect(try Self.token(of: 399, in: cache) == "at-obo-399")
        #expect(try Self.token(of: 1, in: cache) == nil)
        let survivors = try (1..<400).filter { try Self.token(of: $0, in: cache) != nil }
        #expect(survivors == Array((400 - survivors.count)..<400))
        // What the accounting says is what the group holds.
        let counted = try group.index().entries.values.reduce(0) { $0 + CacheBound.cost($1) }
        #expect(counted == group.bound?.accountedBytes)
        let evictions = try Self.metrics.expectCounter("securetokencache_evictions", [("group", group.name)])
        #expect(evictions.totalValue > 0)
        #expect(Int(evictions.totalValue) + (try group.index().count) >= 400 * 3)
    }

    /// The bound keeps the use of an entry only while the group holds the entry: once a write
    /// replaced it, a sign-out deleted it or an eviction took it, its storage is freed, and a new
    /// entry whose storage takes the same address must not inherit its use and its size.
    @Test func theBoundForgetsTheUseOfEveryEntryThatLeaves() throws {
        let group = try Self.group(limit: 256 * 1024)
        let cache = try TokenCache(clientId: Self.webAPI, group: group)
        for number in 0..<200 {
            try Self.storeToken(of: number, in: cache)
            _ = try Self.token(of: number / 2, in: cache)
            if number % 3 == 0 { try Self.storeToken(of: number / 3, in: cache) }  // a replacement
            let held = try group.index().count
            let tracked = try #require(group.bound?.trackedUses)
            #expect(tracked <= held, "after caller \(number): \(tracked) uses kept for \(held) entries")
        }
        let evictions = try Self.metrics.expectCounter("securetokencache_evictions", [("group", group.name)])
        #expect(evictions.totalValue > 0, "the test never evicted")
    }

    /// A lookup notes its answer's use after the group's lock, so a write may have replaced the
    /// entry meanwhile, and the use is noted for an entry the group no longer holds. Once that
    /// entry is freed, a new entry may take its storage's address: it must not inherit the use
    /// (the size it is accounted as).
    @Test func aUseNotedAfterItsEntryLeftIsNeverInheritedByTheNextEntryAtItsAddress() throws {
        let bound = CacheBound(limit: 1 << 30)
        /// An access token as the group holds one read from its store: its members a payload.
        func entry(_ secret: String) throws -> CacheEntry {
            let fields: JSONObject = [
                "credential_type": .string("AccessToken"), "secret": .string(secret), "home_account_id": .string("u.t"),
                "environment": .string("login.microsoftonline.com"), "client_id": .string("c"), "realm": .string("t"),
                "target": .string("User.Read"), "cached_at": .number("1700000000"), "expires_on": .number("4100000000"),
            ]
            let stored = StoredEntry(
                id: EntryID(kind: .accessToken, key: secret), ordinal: 1, entry: .accessToken(AccessToken(fields: fields)))
            guard case .insert(let decoded) = try RecordCodec.decode(RecordCodec.record(stored)) else {
                throw TokenCacheError(.storeCorrupted, "not an entry")
            }
            return decoded.entry
        }
        for round in 0..<200 {
            do {
                let gone = try entry("short \(round)")
                bound.touch(gone)
            }
            let next = try entry("a much longer secret than the one before, so that its record is longer \(round)")
            guard case .payload(let payload) = next.members else { throw TokenCacheError(.storeCorrupted, "no payload") }
            let use = try #require(bound.touch(next))
            #expect(use.bytes == CacheBound.cost(payloadBytes: payload.count), "round \(round)")
        }
        // Nor does the use keep the entry that left alive, with its secret.
        weak var left: AnyObject?
        do {
            let gone = try entry("one more")
            left = gone.storage
            bound.touch(gone)
        }
        #expect(left == nil, "the bound keeps an entry the group no longer holds")
    }

    /// A user's token answered again from the cache's remembered answers counts as a use: the
    /// users looked up since its first lookup are evicted before it.
    @Test func aRememberedAnswerCountsAsAUse() throws {
        let group = try Self.group(limit: 1024 * 1024)
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        let uid = { (number: Int) in "00000000-0000-0000-4444-" + String(100_000_000_000 + number).dropFirst() }
        func store(_ number: Int) throws {
            try cache.store(
                try Fixtures.response(uid: uid(number), username: "user\(number)@contoso.com", accessToken: "at-\(number)"),
                for: try Fixtures.request(), signIn: false)
        }
        func token(_ number: Int) throws -> String? {
            guard let account = try cache.account(identifier: uid(number) + "." + Fixtures.tenant) else { return nil }
            return try cache.accessToken(for: ["User.Read"], account: account)?.token.secret
        }
        // As many users as three quarters of the limit hold: an eviction brings the group back
        // there, so it takes about as many users as the writes below add.
        for number in 0..<30 { try store(number) }
        try #require(group.bound?.accountedBytes ?? .max < 1024 * 1024, "the first users alone pass the limit")
        #expect(try token(0) == "at-0")
        for number in 1..<30 { #expect(try token(number) == "at-\(number)") }
        #expect(try token(0) == "at-0")  // the remembered answer: the group did not change
        var number = 30
        while try group.partitions().contains(where: { $0.partition.key.hasPrefix(uid(1).lowercased()) }) {
            try store(number)
            number += 1
            try #require(number < 2_000, "nothing was evicted")
        }
        // User 1, looked up after user 0's first lookup but before its second, went first.
        #expect(try token(0) == "at-0")
    }

    @Test func expiredTokensAreEvictedBeforeAnyValidOne() throws {
        let clock = Clock()
        let group = try Self.group(limit: 128 * 1024, clock: clock)
        let cache = try TokenCache(clientId: AppTokenTests.daemon, group: group)
        // Tokens for 10 resources, then the clock passes their expiry; tokens for new resources
        // (from the same tenant: one partition) fill the group again.
        for number in 0..<10 {
            try cache.storeAppToken(
                try AppTokenTests.response("at-old-\(number)", expiresIn: 600),
                for: try AppTokenTests.request(["api://old-\(number)/.default"]))
        }
        clock.now.withLock { $0 += 3_600 }
        var number = 0
        while try group.index().expiredAccessTokens(now: group.clock()).count == 10 {
            try cache.storeAppToken(
                try AppTokenTests.response("at-new-\(number)"), for: try AppTokenTests.request(["api://new-\(number)/.default"]))
            number += 1
            try #require(number < 1_000, "the group never evicted")
        }
        // The first eviction took every expired token and no valid one: the tenant's partition
        // (in use) stays whole.
        #expect(try group.index().expiredAccessTokens(now: group.clock()).isEmpty)
        for stored in 0..<number {
            #expect(try cache.appToken(for: ["api://new-\(stored)/.default"], authority: try AppTokenTests.authority()) != nil)
        }
    }

    @Test func aWriteNeverEvictsWhatItStores() throws {
        // A limit smaller than one token: every write evicts all else, and keeps its own.
        let group = try Self.group(limit: 512)
        let cache = try TokenCache(clientId: Self.webAPI, group: group)
        for number in 0..<5 {
            try Self.storeToken(of: number, in: cache)
            #expect(try Self.token(of: number, in: cache) == "at-obo-\(number)")
            #expect(try group.partitions().filter { $0.partition.holder == .onBehalfOf }.count == 1)
        }
    }

    @Test func anEvictedUserIsSignedOutOfEveryClient() throws {
        let group = try Self.group(limit: 8 * 1024)
        let desktop = try TokenCache(clientId: Fixtures.clientA, group: group)
        try desktop.store(try Fixtures.response(uid: OnBehalfOfTests.bob), for: try Fixtures.request())
        #expect(try desktop.accounts().count == 1)
        let server = try TokenCache(clientId: Self.webAPI, group: group)
        for number in 0..<20 { try Self.storeToken(of: number, in: server) }
        #expect(
            try !group.partitions().contains { $0.partition == .user(HomeAccountId("\(OnBehalfOfTests.bob).\(Fixtures.tenant)")) }
        )
        #expect(try desktop.accounts().isEmpty)
    }

    @Test func aMemoryLimitIsRefusedForADurableStoreAndForNothing() throws {
        for store in [StoreKind.file, .keyring, .auto] {
            var configuration = CacheConfiguration(store: store, directory: "/nonexistent-\(UInt32.random(in: 0...UInt32.max))")
            configuration.memoryLimit = 1 << 20
            let error = try #require(throws: TokenCacheError.self) {
                try CacheGroup.open("com.example.bounded", configuration: configuration)
            }
            #expect(error.code == .invalidArgument)
        }
        var zero = CacheConfiguration(store: .memory)
        zero.memoryLimit = 0
        #expect(throws: TokenCacheError.self) { try CacheGroup.open("com.example.bounded", configuration: zero) }
        var bounded = CacheConfiguration(store: .memory)
        bounded.memoryLimit = 1 << 20
        #expect(try CacheGroup.open("com.example.bounded", configuration: bounded).bound?.limit == 1 << 20)
    }

    /// A reader far behind a memory group's writer (more transactions than the store keeps for
    /// replay) still catches up, by reloading.
    @Test func aReaderFarBehindTheWriterCatchesUp() throws {
        let store = MemoryStore(name: "behind")
        let writer = try CacheGroup(name: "behind", store: store)
        let reader = try CacheGroup(name: "behind", store: store)
        let readerCache = try TokenCache(clientId: Self.webAPI, group: reader)
        let writerCache = try TokenCache(clientId: Self.webAPI, group: writer)
        try Self.storeToken(of: 0, in: writerCache)
        #expect(try Self.token(of: 0, in: readerCache) == "at-obo-0")
        for number in 1...(MemoryStore.historyLimit + 10) {
            try writer.importMSAL(
                Array(
                    #"{"AppMetadata": {"appmetadata-login.microsoftonline.com-c\#(number)": {"client_id": "c\#(number)", "environment": "login.microsoftonline.com"}}}"#
                        .utf8))
        }
        try writer.clear(.partition(try Self.caller(0).hash))
        #expect(try Self.token(of: 0, in: readerCache) == nil)
        #expect(try reader.index().count == writer.index().count)
    }

    /// Hits, misses and token requests of a confidential client, by kind.
    @Test func acquisitionsAreCounted() async throws {
        let group = try Self.group(limit: 1 << 20)
        let cache = try TokenCache(clientId: AppTokenTests.daemon, group: group)
        let endpoint = ConfidentialClientTests.CountingEndpoint.appTokens(delay: .zero)
        let client = ConfidentialClient(cache: cache, credentialKind: .secret, endpoint: endpoint)
        for _ in 0..<3 {
            _ = try await client.acquireAppToken(
                for: AppTokenTests.graph, authority: try AppTokenTests.authority(), credential: .secret("s"))
        }
        let dimensions = [("group", group.name), ("kind", "app")]
        #expect(try Self.metrics.expectCounter("securetokencache_cache_hits", dimensions).totalValue == 2)
        #expect(try Self.metrics.expectCounter("securetokencache_cache_misses", dimensions).totalValue == 1)
        #expect(try Self.metrics.expectCounter("securetokencache_token_requests", dimensions).totalValue == 1)
        #expect(endpoint.requests == 1)
    }

    /// On-behalf-of acquisitions are counted too, as their own kind.
    @Test func onBehalfOfAcquisitionsAreCounted() async throws {
        let group = try Self.group(limit: 1 << 20)
        let endpoint = ConfidentialClientTests.CountingEndpoint(delay: .zero) { number in
            .success(
                (try? Fixtures.response(
                    uid: OnBehalfOfTests.alice, accessToken: "at-obo-\(number)", scope: "api://downstream/Data.Read"))?
                    .fields ?? [:])
        }
        let client = ConfidentialClient(cache: try OnBehalfOfTests.cache(group), credentialKind: .certificate, endpoint: endpoint)
        let assertion = try OnBehalfOfTests.assertion(OnBehalfOfTests.alice)
        for _ in 0..<3 {
            _ = try await client.acquireOnBehalfOfToken(
                for: OnBehalfOfTests.downstream, assertion: assertion, authority: try OnBehalfOfTests.authority(),
                credential: .certificateAssertion("header.payload.signature"))
        }
        let dimensions = [("group", group.name), ("kind", "obo")]
        #expect(try Self.metrics.expectCounter("securetokencache_cache_hits", dimensions).totalValue == 2)
        #expect(try Self.metrics.expectCounter("securetokencache_cache_misses", dimensions).totalValue == 1)
        #expect(try Self.metrics.expectCounter("securetokencache_token_requests", dimensions).totalValue == 1)
        #expect(endpoint.requests == 1)
    }
}

extension String {
    /// The string with zeros in front, `count` characters long at least.
    fileprivate func leftPadded(to count: Int) -> String { String(repeating: "0", count: max(0, count - self.count)) + self }
}
