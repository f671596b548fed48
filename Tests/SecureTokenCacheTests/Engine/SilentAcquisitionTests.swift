import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

/// Silent acquisition against the fake authority on 127.0.0.1, with apps A and B of one FOCI
/// family and C outside it sharing one in-memory group.
@Suite(.tags(.multiProcess), .timeLimit(.minutes(3))) struct SilentAcquisitionTests {
    let scopes: Scopes = ["User.Read"]

    @Test func aValidCachedTokenIsReturnedWithoutANetworkCall() async throws {
        let world = try SilentWorld()
        let authority = try FakeAuthority()
        let account = try await authority.signIn(world.a)
        let result = try await world.a.acquireTokenSilently(
            scopes: scopes, account: account, authority: try authority.authority())
        #expect(result.isFromCache)
        #expect(result.scopes.isSubset(of: ["User.Read", "openid", "profile", "offline_access"]))
        #expect(result.account.homeAccountId == account.homeAccountId)
        #expect(try await authority.allRefreshRequests() == 0)
        #expect(!result.description.contains(result.accessToken), "a result's description must not show the token")
        var dumped = ""
        dump(result, to: &dumped)
        #expect(!dumped.contains(result.accessToken) && !String(reflecting: result).contains(result.accessToken))
    }

    @Test func signInInAGivesBATokenThroughTheFamilyRefreshToken() async throws {
        let world = try SilentWorld()
        let authority = try FakeAuthority()
        let account = try await authority.signIn(world.a)

        #expect(try world.b.accounts().map(\.homeAccountId) == [account.homeAccountId])
        let first = try await world.b.acquireTokenSilently(scopes: scopes, account: account, authority: try authority.authority())
        #expect(!first.isFromCache)
        #expect(try await authority.refreshRequests(Fixtures.clientB) == 1)

        let again = try await world.b.acquireTokenSilently(scopes: scopes, account: account, authority: try authority.authority())
        #expect(again.isFromCache)
        #expect(again.accessToken == first.accessToken)
        #expect(try await authority.refreshRequests(Fixtures.clientB) == 1)

        // The family token was rotated in place: still one refresh token, and it works for A.
        let refreshTokens = try world.group.statistics().countByKind[.refreshToken]
        #expect(refreshTokens == 1)
        let forced = try await world.a.acquireTokenSilently(
            scopes: scopes, account: account, authority: try authority.authority(), forceRefresh: true)
        #expect(!forced.isFromCache)
    }

    @Test func aSignsOutAndBKeepsItsAccountAndTokens() async throws {
        let world = try SilentWorld()
        let authority = try FakeAuthority()
        let account = try await authority.signIn(world.a)
        let fromB = try await world.b.acquireTokenSilently(scopes: scopes, account: account, authority: try authority.authority())

        try world.a.signOut(account)
        #expect(try world.a.accounts().isEmpty)
        #expect(try world.a.isSignedOut(account))
        let before = try await authority.allRefreshRequests()
        let error = await SilentWorld.error {
            try await world.a.acquireTokenSilently(scopes: scopes, account: account, authority: try authority.authority())
        }
        #expect(error?.code == .interactionRequired)
        #expect(try await authority.allRefreshRequests() == before, "a signed-out app must not call the authority")

        #expect(try world.b.accounts().map(\.homeAccountId) == [account.homeAccountId])
        let cached = try await world.b.acquireTokenSilently(
            scopes: scopes, account: account, authority: try authority.authority())
        #expect(cached.isFromCache && cached.accessToken == fromB.accessToken)
        let refreshed = try await world.b.acquireTokenSilently(
            scopes: scopes, account: account, authority: try authority.authority(), forceRefresh: true)
        #expect(!refreshed.isFromCache, "B's single sign-on survives A's sign-out (the family token stays)")
    }

    @Test func aNonFamilyClientGetsInteractionRequiredAndNeverAsToken() async throws {
        let world = try SilentWorld()
        let authority = try FakeAuthority()
        let account = try await authority.signIn(world.a)
        let tokenOfA = try #require(try world.a.cachedResult(scopes: scopes, account: account))

        let error = try #require(
            await SilentWorld.error {
                try await world.c.acquireTokenSilently(scopes: scopes, account: account, authority: try authority.authority())
            })
        #expect(error.code == .interactionRequired)
        #expect(error.server?.error == "invalid_grant")
        #expect(error.server?.suberror == "client_mismatch")
        #expect(error.server?.correlationId != nil)
        #expect(try world.c.cachedResult(scopes: scopes, account: account) == nil)
        #expect(!error.description.contains(tokenOfA.accessToken))

        // client_mismatch recorded family_id "" for C: it never offers the family token again.
        let index = try world.group.index()
        #expect(index.family(of: Fixtures.clientC.lowercased(), environment: Environment("127.0.0.1")) == nil)
        #expect(try world.c.refreshTokens(for: account, authority: try authority.authority()).isEmpty)
        let again = await SilentWorld.error {
            try await world.c.acquireTokenSilently(scopes: scopes, account: account, authority: try authority.authority())
        }
        #expect(again?.code == .interactionRequired)
        #expect(try await authority.refreshRequests(Fixtures.clientC) == 1)

        // The family token was not spent: A still refreshes with it.
        let refreshed = try await world.a.acquireTokenSilently(
            scopes: scopes, account: account, authority: try authority.authority(), forceRefresh: true)
        #expect(!refreshed.isFromCache)

        // Once C signs in itself, it uses its own refresh token.
        try await authority.signIn(world.c)
        world.clock.advance(by: 7200)
        let own = try await world.c.acquireTokenSilently(scopes: scopes, account: account, authority: try authority.authority())
        #expect(!own.isFromCache)
        #expect(try await authority.refreshRequests(Fixtures.clientC) == 2)
    }

    @Test func anExpiredAccessTokenCausesExactlyOneRefresh() async throws {
        let world = try SilentWorld()
        let authority = try FakeAuthority()
        let account = try await authority.signIn(world.a)
        let old = try #require(try world.a.cachedResult(scopes: scopes, account: account))
        world.clock.advance(by: 3600 - 299)  // inside the 300 s margin: counts as expired

        let refreshed = try await world.a.acquireTokenSilently(
            scopes: scopes, account: account, authority: try authority.authority())
        #expect(!refreshed.isFromCache)
        #expect(refreshed.accessToken != old.accessToken)
        #expect(refreshed.expiresOn == world.clock.now + 3600)
        let cached = try await world.a.acquireTokenSilently(
            scopes: scopes, account: account, authority: try authority.authority())
        #expect(cached.isFromCache && cached.accessToken == refreshed.accessToken)
        #expect(try await authority.refreshRequests(Fixtures.clientA) == 1)
    }

    @Test func refreshOnPastWithTheAuthorityDownReturnsTheCachedToken() async throws {
        let world = try SilentWorld()
        let authority = try FakeAuthority()
        let account = try await authority.signIn(world.a, refreshIn: 600)
        let original = try #require(try world.a.cachedResult(scopes: scopes, account: account))
        world.clock.advance(by: 900)  // refresh_on passed, still valid for 2700 s

        for mode in ["500", "garbage", "hang"] {
            try await authority.control(["mode": mode])
            let result = try await world.a.acquireTokenSilently(
                scopes: scopes, account: account, authority: try authority.authority(), timeout: .seconds(1))
            #expect(result.isFromCache, "mode \(mode)")
            #expect(result.accessToken == original.accessToken, "mode \(mode)")
        }
        #expect(try await authority.refreshRequests(Fixtures.clientA) == 3)

        // The authority refusing the refresh token is not a network failure: the user must act.
        try await authority.control(["mode": "invalid_grant"])
        let error = await SilentWorld.error {
            try await world.a.acquireTokenSilently(scopes: scopes, account: account, authority: try authority.authority())
        }
        #expect(error?.code == .interactionRequired)

        try await authority.control(["mode": "ok"])
        let renewed = try await world.a.acquireTokenSilently(
            scopes: scopes, account: account, authority: try authority.authority())
        #expect(!renewed.isFromCache)
        #expect(renewed.accessToken != original.accessToken)
    }

    @Test func callersOfATokenPastRefreshOnDoNotQueueBehindASlowRefresh() async throws {
        let world = try SilentWorld()
        let authority = try FakeAuthority()
        let account = try await authority.signIn(world.a, refreshIn: 600)
        let original = try #require(try world.a.cachedResult(scopes: scopes, account: account))
        world.clock.advance(by: 900)
        try await authority.control(["mode": "hang", "hang": 3])

        let target = try authority.authority()
        let caches = try (0..<6).map { _ in try world.cache(Fixtures.clientA) }
        let started = ContinuousClock.now
        let results = try await withThrowingTaskGroup(of: AuthenticationResult.self) { tasks in
            for cache in caches {
                tasks.addTask {
                    try await cache.acquireTokenSilently(
                        scopes: ["User.Read"], account: account, authority: target, timeout: .seconds(1))
                }
            }
            return try await tasks.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.isFromCache && $0.accessToken == original.accessToken })
        #expect(try await authority.refreshRequests(Fixtures.clientA) == 1, "one caller renews, the others serve the cache")
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test func wipeRemovesTheAccountForEveryClient() async throws {
        let world = try SilentWorld()
        let authority = try FakeAuthority()
        let account = try await authority.signIn(world.a)
        _ = try await world.b.acquireTokenSilently(scopes: scopes, account: account, authority: try authority.authority())

        #expect(try world.group.wipe(account) > 0)
        #expect(try world.a.accounts().isEmpty)
        #expect(try world.b.accounts().isEmpty)
        for cache in [world.a, world.b] {
            let error = await SilentWorld.error {
                try await cache.acquireTokenSilently(scopes: scopes, account: account, authority: try authority.authority())
            }
            #expect(error?.code == .interactionRequired)
        }
    }

    static let failures: [(mode: String, code: TokenCacheError.Code)] = [
        ("500", .serverError), ("garbage", .serverError), ("truncated", .network), ("hang", .network),
        ("missing_fields", .malformedResponse),
    ]

    @Test(arguments: failures)
    func aFailingAuthorityGivesATypedErrorAndLeavesTheCacheUnchanged(mode: String, code: TokenCacheError.Code) async throws {
        let world = try SilentWorld()
        let authority = try FakeAuthority()
        let account = try await authority.signIn(world.a)
        world.clock.advance(by: 4000)
        let before = try world.group.exportMSAL(includeSecrets: true)
        let generation = world.group.generation
        let refreshToken = try #require(try world.a.refreshTokens(for: account).first)

        try await authority.control(["mode": mode, "hang": 5])
        let error = try #require(
            await SilentWorld.error {
                try await world.a.acquireTokenSilently(
                    scopes: scopes, account: account, authority: try authority.authority(), timeout: .seconds(1))
            })
        #expect(error.code == code, "\(mode): \(error)")
        #expect(!error.description.contains(refreshToken.secret))
        #expect(world.group.generation == generation)
        #expect(try world.group.exportMSAL(includeSecrets: true) == before)
        #expect(try await authority.refreshRequests(Fixtures.clientA) == 1)
    }

    @Test func declinedScopesAreCachedAndReported() async throws {
        let world = try SilentWorld()
        let authority = try FakeAuthority()
        let account = try await authority.signIn(world.a)
        try await authority.control(["decline": ["Mail.Read"]])

        let error = try #require(
            await SilentWorld.error {
                try await world.b.acquireTokenSilently(
                    scopes: ["User.Read", "Mail.Read"], account: account, authority: try authority.authority())
            })
        #expect(error.code == .serverDeclinedScopes)
        let details = try #require(error.declinedScopes)
        #expect(details.declined == ["Mail.Read"])
        #expect(Scopes(["User.Read"]).isSubset(of: details.granted))
        #expect(!details.result.isFromCache)
        let cached = try #require(try world.b.cachedResult(scopes: ["User.Read"], account: account))
        #expect(cached.accessToken == details.result.accessToken)
    }

    @Test func eightConcurrentCallersCauseOneRequestAndStoreTheRotatedToken() async throws {
        let world = try SilentWorld()
        let authority = try FakeAuthority()
        let account = try await authority.signIn(world.a)
        let original = try #require(try world.a.refreshTokens(for: account).first)
        world.clock.advance(by: 4000)
        // A slow authority makes the eight callers really overlap.
        try await authority.control(["delay": 0.3])

        let caches = try (0..<8).map { _ in try world.cache(Fixtures.clientA) }
        let target = try authority.authority()
        let results = try await withThrowingTaskGroup(of: AuthenticationResult.self) { tasks in
            for cache in caches {
                tasks.addTask { try await cache.acquireTokenSilently(scopes: scopes, account: account, authority: target) }
            }
            return try await tasks.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 8)
        #expect(Set(results.map(\.accessToken)).count == 1)
        #expect(results.filter { !$0.isFromCache }.count == 1)
        #expect(try await authority.refreshRequests(Fixtures.clientA) == 1)

        let stored = try world.a.refreshTokens(for: account)
        #expect(stored.count == 1)
        #expect(stored.first?.secret != original.secret)
        // The stored token is the live one: the authority (which revokes spent tokens) takes it.
        try await authority.control([:])
        let next = try await world.a.acquireTokenSilently(scopes: scopes, account: account, authority: target, forceRefresh: true)
        #expect(!next.isFromCache)
    }

    @Test func noRefreshTokenMeansInteractionRequiredWithoutANetworkCall() async throws {
        let world = try SilentWorld()
        let authority = try FakeAuthority()
        let account = try await authority.signIn(world.a)
        try world.group.importMSAL(Array("{}".utf8))
        // Drop every refresh token: wipe and re-store an answer without one.
        try world.group.wipe(account)
        var fields = try await authority.signInResponse(client: Fixtures.clientA).fields
        fields["refresh_token"] = nil
        try world.a.store(
            try TokenResponse(fields: fields),
            for: TokenRequest(
                clientId: Fixtures.clientA, authority: try authority.authority(), scopes: scopes, grantType: "authorization_code")
        )
        world.clock.advance(by: 4000)
        let error = await SilentWorld.error {
            try await world.a.acquireTokenSilently(scopes: scopes, account: account, authority: try authority.authority())
        }
        #expect(error?.code == .interactionRequired)
        #expect(error?.server == nil)
        #expect(try await authority.allRefreshRequests() == 0)
    }
}
