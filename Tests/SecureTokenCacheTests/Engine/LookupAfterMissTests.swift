import Synchronization
import Testing

@testable import SecureTokenCache

/// A lookup that finds nothing asks the store once whether another process committed something
/// its generation does not show yet (``CacheStore/checkForChanges()``), and looks again when it
/// did; a lookup that finds something never asks.
@Suite(.timeLimit(.minutes(1))) struct LookupAfterMissTests {
    /// A store whose generation shows the commits of another group on the same memory store only
    /// once it is asked, as the shared-cache store's shows another tool's write only once its
    /// watcher's thread woke. Counts how often it was asked.
    final class LaggingStore: CacheStore {
        let inner: MemoryStore
        private let shown: Atomic<UInt64>
        let checks = Atomic<Int>(0)

        init(_ inner: MemoryStore) {
            self.inner = inner
            shown = Atomic(inner.currentGeneration())
        }

        var storeDescription: StoreDescription { inner.storeDescription }
        var groupDirectory: GroupDirectory? { nil }
        func currentGeneration() -> UInt64 { shown.load(ordering: .acquiring) }
        func load() throws -> ([Record], StoreCursor) { try inner.load() }
        func update(since cursor: StoreCursor) throws -> StoreUpdate { try inner.update(since: cursor) }
        func changes() throws -> AsyncStream<Void> { try inner.changes() }

        func transact(since cursor: StoreCursor, _ body: (StoreTransaction) throws -> [RecordChange]) throws -> StoreCursor {
            let after = try inner.transact(since: cursor, body)
            shown.store(after.generation, ordering: .releasing)
            return after
        }

        func checkForChanges() -> Bool {
            checks.wrappingAdd(1, ordering: .relaxed)
            let now = inner.currentGeneration()
            return shown.exchange(now, ordering: .acquiringAndReleasing) != now
        }

        var checkCount: Int { checks.load(ordering: .relaxed) }
    }

    /// A reader whose store lags, and a writer in "another process" on the same records.
    struct World {
        let store: LaggingStore
        let reader: TokenCache
        let writer: TokenCache

        init(client: String = Fixtures.clientA) throws {
            let memory = MemoryStore(name: "lagging")
            store = LaggingStore(memory)
            reader = try TokenCache(clientId: client, group: CacheGroup(name: "lagging", store: store))
            writer = try TokenCache(clientId: client, group: CacheGroup(name: "lagging", store: memory))
        }
    }

    static let alice = "Alice@Contoso.com"

    /// A user of `uid` named `username`, signed in by `cache`, and the account as `cache` sees it.
    @discardableResult
    func signIn(_ uid: String, _ username: String, with cache: TokenCache) throws -> Account {
        try cache.store(Fixtures.response(uid: uid, username: username), for: Fixtures.request())
        return try #require(try cache.account(username: username))
    }

    @Test func eachLookupFindsWhatWasWrittenElsewhereAfterItMissed() throws {
        let world = try World()
        #expect(try world.reader.accounts().isEmpty)
        #expect(world.store.checkCount == 1, "an empty answer asks the store")

        try signIn("00000000-0000-0000-1111-000000000001", Self.alice, with: world.writer)
        #expect(try world.reader.accounts().map(\.username) == [Self.alice])

        let bob = try signIn("00000000-0000-0000-1111-000000000002", "Bob@Contoso.com", with: world.writer)
        #expect(try world.reader.account(username: "Bob@Contoso.com") == bob)

        let carol = try signIn("00000000-0000-0000-1111-000000000003", "Carol@Contoso.com", with: world.writer)
        #expect(try world.reader.account(identifier: carol.homeAccountId.normalised) == carol)

        let dave = try signIn("00000000-0000-0000-1111-000000000004", "Dave@Contoso.com", with: world.writer)
        #expect(try world.reader.refreshTokens(for: dave).map(\.secret) == ["rt-secret"])

        try world.writer.store(
            Fixtures.response(accessToken: "at-mail", scope: "Mail.Read"), for: Fixtures.request(scopes: ["Mail.Read"]))
        let alice = try #require(try world.reader.account(username: Self.alice))
        #expect(try world.reader.accessToken(for: ["Mail.Read"], account: alice)?.token.secret == "at-mail")
    }

    @Test func anAppTokenWrittenElsewhereIsFoundByTheLookupThatMissedIt() throws {
        let world = try World(client: AppTokenTests.daemon)
        let authority = try AppTokenTests.authority()
        #expect(try world.reader.appToken(for: AppTokenTests.graph, authority: authority) == nil)
        try world.writer.storeAppToken(try AppTokenTests.response("at-app"), for: try AppTokenTests.request())
        #expect(try world.reader.appToken(for: AppTokenTests.graph, authority: authority)?.token.secret == "at-app")
    }

    @Test func aHitNeverAsksTheStoreAndATrueMissAsksOnce() throws {
        let world = try World()
        let account = try signIn("00000000-0000-0000-1111-000000000001", Self.alice, with: world.reader)
        _ = try world.reader.accounts()
        _ = try world.reader.account(identifier: account.homeAccountId.normalised)
        _ = try world.reader.refreshTokens(for: account)
        for _ in 0..<3 { #expect(try world.reader.accessToken(for: ["User.Read"], account: account) != nil) }
        #expect(world.store.checkCount == 0, "a lookup that found something asked the store")

        #expect(try world.reader.accessToken(for: ["Files.Read"], account: account) == nil)
        #expect(world.store.checkCount == 1)
        #expect(try world.reader.account(username: "nobody@contoso.com") == nil)
        #expect(world.store.checkCount == 2)
    }
}
