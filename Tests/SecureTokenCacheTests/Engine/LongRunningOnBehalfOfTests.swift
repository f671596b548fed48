import Synchronization
import Testing

@testable import SecureTokenCache

/// Long-running on-behalf-of sessions: started with the caller's assertion, renewed later with
/// the session's refresh token and no assertion, filed under the session key as MSAL.NET files
/// them, never mixed with the user's own sign-in, and bad input refused.
@Suite(.timeLimit(.minutes(1))) struct LongRunningOnBehalfOfTests {
    typealias Endpoint = ConfidentialClientTests.CountingEndpoint
    static let downstream = OnBehalfOfTests.downstream

    /// A clock the test moves.
    final class Clock: Sendable {
        let now = Mutex<Int64>(1_700_000_000)
    }

    struct World {
        let clock = Clock()
        let group: CacheGroup
        let cache: TokenCache
        let endpoint: Endpoint
        let client: ConfidentialClient

        /// A web API's cache; its token endpoint answers request `n` with an on-behalf-of token
        /// `at-n`, refresh token `rt-n` and the caller's id token.
        init() throws {
            let clock = self.clock
            group = try CacheGroup(
                name: "long-running", store: MemoryStore(name: "long-running"), clock: { clock.now.withLock { $0 } })
            cache = try OnBehalfOfTests.cache(group)
            endpoint = Endpoint(delay: .zero) { number in
                var fields = (try? OnBehalfOfTests.response("at-\(number)").fields) ?? [:]
                fields["refresh_token"] = .string("rt-\(number)")
                return .success(fields)
            }
            client = ConfidentialClient(cache: cache, credentialKind: .secret, endpoint: endpoint)
        }

        func start(_ assertion: UserAssertion, key: String? = nil) async throws -> ConfidentialClient.LongRunningSession {
            try await client.startLongRunningSession(
                for: LongRunningOnBehalfOfTests.downstream, assertion: assertion, sessionKey: key,
                authority: try OnBehalfOfTests.authority(), credential: .secret("s"))
        }

        func acquire(_ key: String) async throws -> ConfidentialClient.Acquired {
            try await client.acquireLongRunningToken(
                for: LongRunningOnBehalfOfTests.downstream, sessionKey: key, authority: try OnBehalfOfTests.authority(),
                credential: .secret("s"))
        }
    }

    @Test func aSessionIsRenewedWithItsRefreshTokenWithoutTheAssertion() async throws {
        let world = try World()
        let session = try await world.start(try OnBehalfOfTests.assertion(OnBehalfOfTests.alice), key: "report-42")
        #expect(session.key == "report-42")
        #expect(session.acquired.token.secret == "at-1" && !session.acquired.isFromCache)
        #expect(session.acquired.token.userAssertionHash == "report-42")

        // Within the token's life: from the cache, no request.
        #expect(try await world.acquire("report-42") == .init(token: session.acquired.token, isFromCache: true))
        #expect(world.endpoint.requests == 1)

        // Past its expiry: one refresh of the session's token, with the app's credential.
        world.clock.now.withLock { $0 += 3_600 }
        let renewed = try await world.acquire("report-42")
        #expect(renewed.token.secret == "at-2" && !renewed.isFromCache)
        #expect(world.endpoint.forms == ["obo secret", "session-refresh rt-1 secret"])
        // The refresh token rotated in place: one for the session, the new one.
        let refreshTokens = try world.group.entries(.init(kinds: [.refreshToken]))
        #expect(refreshTokens.map { $0.fields.string("secret") } == ["rt-2"])
        #expect(refreshTokens.first?.fields.string("user_assertion_hash") == "report-42")
        #expect(try await world.acquire("report-42").isFromCache)
        #expect(world.endpoint.requests == 2)

        // The session is a partition of its own, keyed by the session key.
        #expect(try world.group.partitions().contains { $0.partition.key == "report-42" && $0.refreshTokenCount == 1 })
    }

    @Test func theDefaultKeyIsTheAssertionHashAndAnotherKeyFindsNothing() async throws {
        let world = try World()
        let assertion = try OnBehalfOfTests.assertion(OnBehalfOfTests.alice)
        let session = try await world.start(assertion)
        #expect(session.key == assertion.hash)
        // Starting again answers from the session's cache.
        #expect(try await world.start(assertion).acquired.isFromCache)
        let error = await #expect(throws: TokenCacheError.self) { try await world.acquire("another-session") }
        #expect(error?.code == .interactionRequired)
        #expect(world.endpoint.requests == 1)
    }

    /// The user's own sign-in never redeems a session's refresh token, and the session's
    /// refresh token does not take the key of the user's own.
    @Test func aSessionsRefreshTokenIsNeverTheUsers() async throws {
        let world = try World()
        _ = try await world.start(try OnBehalfOfTests.assertion(OnBehalfOfTests.alice), key: "job-1")
        let account = try #require(try world.group.index().primaryAccount("\(OnBehalfOfTests.alice).\(Fixtures.tenant)"))
        let silent = await #expect(throws: TokenCacheError.self) {
            try await world.cache.acquireTokenSilently(
                scopes: Self.downstream, account: account, authority: try OnBehalfOfTests.authority(),
                endpoint: world.endpoint)
        }
        #expect(silent?.code == .interactionRequired)
        #expect(world.endpoint.requests == 1)

        // The user signs in to the web API itself: both refresh tokens are kept.
        try world.cache.store(
            try Fixtures.response(uid: OnBehalfOfTests.alice, refreshToken: "rt-user"),
            for: try Fixtures.request(client: OnBehalfOfTests.webAPI))
        let secrets = Set(try world.group.entries(.init(kinds: [.refreshToken])).compactMap { $0.fields.string("secret") })
        #expect(secrets == ["rt-1", "rt-user"])
        world.clock.now.withLock { $0 += 3_600 }
        _ = try await world.acquire("job-1")
        #expect(world.endpoint.forms.last == "session-refresh rt-1 secret")
    }

    /// MSAL.NET's long-running session in a shared cache: its refresh token carries the session
    /// key as `user_assertion_hash`, and renews the session here.
    @Test func aSessionMSALNETStoredIsRenewedHere() async throws {
        let world = try World()
        let user = "\(OnBehalfOfTests.alice).\(Fixtures.tenant)"
        try world.group.importMSAL(
            Array(
                """
                {"RefreshToken": {"\(user)-login.microsoftonline.com-refreshtoken-\(OnBehalfOfTests.webAPI)--": {
                    "home_account_id": "\(user)", "environment": "login.microsoftonline.com", "credential_type": "RefreshToken",
                    "client_id": "\(OnBehalfOfTests.webAPI)", "secret": "rt-dotnet", "user_assertion_hash": "dotnet-session"}}}
                """.utf8))
        let renewed = try await world.acquire("dotnet-session")
        #expect(renewed.token.secret == "at-1")
        #expect(world.endpoint.forms == ["session-refresh rt-dotnet secret"])
        #expect(try world.group.entries(.init(kinds: [.refreshToken])).compactMap { $0.fields.string("secret") } == ["rt-1"])
    }

    @Test func badInputIsRefusedAndNothingIsSent() async throws {
        let world = try World()
        let assertion = try OnBehalfOfTests.assertion(OnBehalfOfTests.alice)
        let empty = await #expect(throws: TokenCacheError.self) { try await world.start(assertion, key: "") }
        #expect(empty?.code == .invalidArgument)
        let common = await #expect(throws: TokenCacheError.self) {
            try await world.client.acquireLongRunningToken(
                for: Self.downstream, sessionKey: "k", authority: try Authority("https://login.microsoftonline.com/common"),
                credential: .secret("s"))
        }
        #expect(common?.code == .invalidArgument)
        let wrongKind = await #expect(throws: TokenCacheError.self) {
            try await world.client.acquireLongRunningToken(
                for: Self.downstream, sessionKey: "k", authority: try OnBehalfOfTests.authority(),
                credential: .certificateAssertion("eyJ.eyJ.sig"))
        }
        #expect(wrongKind?.code == .invalidArgument)
        #expect(world.endpoint.requests == 0)
        #expect(try world.group.index().count == 0)
    }
}
