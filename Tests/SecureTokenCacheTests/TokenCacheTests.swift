import Testing

@testable import SecureTokenCache

@Suite struct TokenCacheTests {
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

    @Test func aGroupSeesAnotherGroupsWriteOnItsNextLookup() throws {
        let first = try Fixtures.group()
        let second = try CacheGroup(name: "test", store: first.store, clock: first.clock)
        let writer = try TokenCache(clientId: Fixtures.clientA, group: first)
        let reader = try TokenCache(clientId: Fixtures.clientA, group: second)
        #expect(try reader.accounts().isEmpty)
        try writer.store(try Fixtures.response(), for: try Fixtures.request())
        #expect(try reader.accounts().map(\.username) == ["Alice@Contoso.com"])
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
