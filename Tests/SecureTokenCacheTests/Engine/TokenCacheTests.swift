import Synchronization
import Testing

@testable import SecureTokenCache

@Suite(.timeLimit(.minutes(1))) struct TokenCacheTests {
    @Test func anAuthorityNamingTheTenantByDomainFindsTokensStoredUnderItsTenantId() throws {
        let group = try Fixtures.group()
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        let byDomain = try Authority("https://login.microsoftonline.com/Contoso.onmicrosoft.com")
        try cache.store(try Fixtures.response(), for: try Fixtures.request(authority: byDomain.url))
        let account = try #require(try cache.accounts().first)
        // Stored under the id token's tid (rule 3) ...
        #expect(
            try cache.accessToken(
                for: ["User.Read"], account: account,
                authority: try Authority("https://login.microsoftonline.com/\(Fixtures.tenant)")) != nil)
        // ... and found again through the domain-named authority the app is configured with.
        #expect(try cache.accessToken(for: ["User.Read"], account: account, authority: byDomain)?.token.secret == "at-secret")
        // Another process learns the alias from the group, not from its own memory.
        let other = try CacheGroup(name: "test", store: group.store, clock: group.clock)
        let otherCache = try TokenCache(clientId: Fixtures.clientA, group: other)
        #expect(try otherCache.accessToken(for: ["User.Read"], account: account, authority: byDomain) != nil)
    }

    /// `openid`, `profile` and `offline_access` are ignored in matching, so scopes of only those
    /// name no resource: every token holds them, and a lookup would answer with whichever token
    /// lives longest, for whatever API. Refused, as msal-python refuses them.
    @Test func aLookupForScopesThatNameNoResourceIsRefused() async throws {
        let cache = try TokenCache(clientId: Fixtures.clientA, group: try Fixtures.group())
        try cache.store(try Fixtures.response(), for: try Fixtures.request())
        let account = try #require(try cache.accounts().first)
        #expect(try cache.accessToken(for: ["User.Read"], account: account) != nil)
        for scopes: Scopes in [["openid", "profile"], ["offline_access"], []] {
            let error = #expect(throws: TokenCacheError.self, "\(scopes)") {
                try cache.accessToken(for: scopes, account: account)
            }
            #expect(error?.code == .invalidArgument)
        }
        let silent = await #expect(throws: TokenCacheError.self) {
            try await cache.acquireTokenSilently(scopes: ["openid"], account: account, endpoint: NoNetwork())
        }
        #expect(silent?.code == .invalidArgument)
    }

    /// A token endpoint that no test here may reach.
    struct NoNetwork: TokenEndpointClient {
        func redeem(refreshToken: String, clientId: String, scopes: Scopes, endpoint: String, timeout: Duration)
            async throws -> TokenResponse
        {
            throw TokenCacheError(.network, "the test made a network call")
        }
    }

    @Test func aGroupSeesAnotherGroupsWriteOnItsNextLookup() throws {
        let first = try Fixtures.group()
        let second = try CacheGroup(name: "test", store: first.store, clock: first.clock)
        let writer = try TokenCache(clientId: Fixtures.clientA, group: first)
        let reader = try TokenCache(clientId: Fixtures.clientA, group: second)
        #expect(try reader.accounts().isEmpty)
        try writer.store(try Fixtures.response(), for: try Fixtures.request())
        #expect(try reader.accounts().map(\.username) == ["Alice@Contoso.com"])
    }

    @Test func aRepeatedLookupFollowsOtherWritesAndTheClock() throws {
        final class Clock: Sendable { let now = Atomic<Int64>(1_700_000_000) }
        let clock = Clock()
        let store = MemoryStore(name: "test")
        let first = try CacheGroup(name: "test", store: store, clock: { clock.now.load(ordering: .relaxed) })
        let second = try CacheGroup(name: "test", store: store, clock: { clock.now.load(ordering: .relaxed) })
        let writer = try TokenCache(clientId: Fixtures.clientA, group: first)
        let reader = try TokenCache(clientId: Fixtures.clientA, group: second)
        try writer.store(try Fixtures.response(accessToken: "at-1"), for: try Fixtures.request())
        let account = try #require(try reader.accounts().first)
        #expect(try reader.accessToken(for: ["User.Read"], account: account)?.token.secret == "at-1")
        #expect(try reader.accessToken(for: ["User.Read"], account: account)?.token.secret == "at-1")
        // Other scopes, another tenant: not the remembered answer.
        #expect(try reader.accessToken(for: ["Mail.Read"], account: account) == nil)
        let other = try Authority("https://login.microsoftonline.com/\(Fixtures.guestTenant)")
        #expect(try reader.accessToken(for: ["User.Read"], account: account, authority: other) == nil)

        // Another group's write replaces the token: the next lookup sees it.
        try writer.store(try Fixtures.response(accessToken: "at-2"), for: try Fixtures.request(), signIn: false)
        #expect(try reader.accessToken(for: ["User.Read"], account: account)?.token.secret == "at-2")
        // Within 300 s of expiry the remembered token is no answer either.
        clock.now.store(1_700_000_000 + 3_600 - 299, ordering: .relaxed)
        #expect(try reader.accessToken(for: ["User.Read"], account: account) == nil)
    }

    /// A server asks for many users' tokens in turn: each answer is remembered by its user, a
    /// user's two questions both, and every remembered answer follows another group's writes.
    @Test func answersForManyUsersInTurnFollowOtherWrites() throws {
        let store = MemoryStore(name: "test")
        let writer = try TokenCache(
            clientId: Fixtures.clientA, group: CacheGroup(name: "test", store: store, clock: { 1_700_000_000 }))
        let reader = try TokenCache(
            clientId: Fixtures.clientA, group: CacheGroup(name: "test", store: store, clock: { 1_700_000_000 }))
        let uid = { (number: Int) in "00000000-0000-0000-3333-" + String(100_000_000_000 + number).dropFirst() }
        for number in 0..<60 {
            try writer.store(
                try Fixtures.response(uid: uid(number), username: "user\(number)@contoso.com", accessToken: "at-\(number)"),
                for: try Fixtures.request())
        }
        try writer.store(
            try Fixtures.response(uid: uid(0), username: "user0@contoso.com", accessToken: "mail-0", scope: "Mail.Read"),
            for: try Fixtures.request(scopes: ["Mail.Read"]), signIn: false)
        let accounts = try (0..<60).map { number in
            try #require(try reader.account(identifier: uid(number) + "." + Fixtures.tenant))
        }
        func expectAnswers(replaced: [Int: String] = [:], signedOut: Set<Int> = [], _ comment: Comment) throws {
            for _ in 0..<2 {
                for (number, account) in accounts.enumerated() {
                    let expected = signedOut.contains(number) ? nil : replaced[number] ?? "at-\(number)"
                    #expect(try reader.accessToken(for: ["User.Read"], account: account)?.token.secret == expected, comment)
                    if number == 0 {
                        #expect(try reader.accessToken(for: ["Mail.Read"], account: account)?.token.secret == "mail-0", comment)
                    }
                }
            }
        }
        try expectAnswers("first answers, then remembered ones")
        try writer.store(
            try Fixtures.response(uid: uid(7), username: "user7@contoso.com", accessToken: "at-7b"), for: try Fixtures.request(),
            signIn: false)
        try expectAnswers(replaced: [7: "at-7b"], "after another group replaced user 7's token")
        try writer.signOut(accounts[3])
        try expectAnswers(replaced: [7: "at-7b"], signedOut: [3], "after another group signed user 3 out")
    }

    @Test func catchingUpNeverChangesASnapshotAReaderHolds() throws {
        let first = try Fixtures.group()
        let second = try CacheGroup(name: "test", store: first.store, clock: first.clock)
        let writer = try TokenCache(clientId: Fixtures.clientA, group: first)
        try writer.store(try Fixtures.response(), for: try Fixtures.request())
        let held = try second.snapshot()
        let heldCount = held.index.count
        let heldCursor = held.cursor
        try writer.store(
            try Fixtures.response(accessToken: "at-2", scope: "Files.Read"), for: try Fixtures.request(scopes: ["Files.Read"]),
            signIn: false)
        // The held snapshot is the installed one: catching up must build the next one aside.
        let next = try second.snapshot()
        #expect(next !== held)
        #expect(held.index.count == heldCount && held.cursor == heldCursor)
        #expect(next.index.count == heldCount + 1)

        // With no reader holding it, the installed snapshot is brought up to date in place (but in
        // a ThreadSanitizer build, which always builds aside: see `Snapshot.updatesInPlace`).
        let installedID = ObjectIdentifier(next)
        let installedCount = next.index.count
        _ = consume next
        _ = consume held
        try writer.store(
            try Fixtures.response(accessToken: "at-3", scope: "Mail.Read"), for: try Fixtures.request(scopes: ["Mail.Read"]),
            signIn: false)
        let advanced = try second.snapshot()
        #expect((ObjectIdentifier(advanced) == installedID) == CacheGroup.Snapshot.updatesInPlace)
        #expect(advanced.index.count == installedCount + 1)
        #expect(advanced.cursor.generation == first.generation)
    }

    @Test func concurrentReadersWhileWriting() async throws {
        let group = try Fixtures.group()
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        try cache.store(try Fixtures.response(), for: try Fixtures.request())
        let account = try #require(try cache.accounts().first)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            for writer in 0..<4 {
                tasks.addTask { () throws -> Void in
                    for round in 0..<50 {
                        try cache.store(
                            try Fixtures.response(accessToken: "at-\(writer)-\(round)", scope: "Scope\(writer).Read"),
                            for: try Fixtures.request(scopes: ["Scope\(writer).Read"]), signIn: false)
                    }
                }
            }
            for _ in 0..<4 {
                tasks.addTask { () throws -> Void in
                    for _ in 0..<200 {
                        // Readers always see a whole snapshot: the sign-in's token never disappears.
                        #expect(try cache.accessToken(for: ["User.Read"], account: account) != nil)
                    }
                }
            }
            try await tasks.waitForAll()
        }
        for writer in 0..<4 {
            #expect(try cache.accessToken(for: ["Scope\(writer).Read"], account: account)?.token.secret == "at-\(writer)-49")
        }
    }
}
