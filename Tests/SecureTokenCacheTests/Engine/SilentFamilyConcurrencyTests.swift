import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

/// Family members refreshing at once share one rotating refresh token: they must queue.
@Suite(.tags(.multiProcess), .timeLimit(.minutes(3))) struct SilentFamilyConcurrencyTests {
    @Test func aAndBRefreshingAtOnceNeverPresentASpentFamilyToken() async throws {
        let world = try SilentWorld()
        let authority = try FakeAuthority()
        let account = try await authority.signIn(world.a)
        _ = try await world.b.acquireTokenSilently(scopes: ["User.Read"], account: account, authority: try authority.authority())
        world.clock.advance(by: 4000)
        try await authority.control(["delay": 0.2])

        let target = try authority.authority()
        let caches = [world.a, world.b, world.a, world.b]
        let results = try await withThrowingTaskGroup(of: AuthenticationResult.self) { tasks in
            for cache in caches {
                tasks.addTask { try await cache.acquireTokenSilently(scopes: ["User.Read"], account: account, authority: target) }
            }
            return try await tasks.reduce(into: []) { $0.append($1) }
        }
        // One refresh per app (each needs its own access token), none with a spent token.
        #expect(results.filter { !$0.isFromCache }.count == 2)
        #expect(try await authority.refreshRequests(Fixtures.clientA) == 1)
        #expect(try await authority.refreshRequests(Fixtures.clientB) == 2)
        #expect(try world.group.statistics().countByKind[.refreshToken] == 1)
    }

    /// A token endpoint that answers for another user.
    struct WrongUserEndpoint: TokenEndpointClient {
        let response: TokenResponse
        func redeem(refreshToken: String, clientId: String, scopes: Scopes, endpoint: String, timeout: Duration) async throws
            -> TokenResponse
        {
            response
        }
    }

    @Test func anAnswerForAnotherAccountIsNotStored() async throws {
        let world = try SilentWorld()
        let authority = try FakeAuthority()
        let account = try await authority.signIn(world.a)
        world.clock.advance(by: 4000)
        let other = try await authority.signInResponse(client: Fixtures.clientA, username: "mallory@contoso.com")
        let generation = world.group.generation
        let error = await SilentWorld.error {
            try await world.a.acquireTokenSilently(
                scopes: ["User.Read"], account: account, authority: try authority.authority(),
                endpoint: WrongUserEndpoint(response: other))
        }
        #expect(error?.code == .serverError)
        #expect(world.group.generation == generation)
    }
}
