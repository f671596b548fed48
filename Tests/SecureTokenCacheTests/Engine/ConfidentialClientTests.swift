import Synchronization
import Testing

@testable import SecureTokenCache

/// Confidential-client acquisition: a cached token served at once, one background renewal past
/// `refresh_on`, one token request however many tasks miss together (its token or its error for
/// every one of them), and a credential of the wrong kind refused before anything is sent.
@Suite(.timeLimit(.minutes(2))) struct ConfidentialClientTests {
    /// A token endpoint that counts requests, holds each for `delay` so that concurrent callers
    /// overlap, and answers as `answer` says for the request's number (from 1).
    final class CountingEndpoint: TokenEndpointClient {
        let delay: Duration
        let answer: @Sendable (Int) -> Result<JSONObject, TokenCacheError>
        private let counts = Mutex<(requests: Int, forms: [String])>((0, []))
        /// The callers of a ``stampede(_:tasks:scopes:endpoint:)`` and how many of them are in a
        /// request in flight: the stampede's request waits until every one is before its delay, so
        /// that a caller the machine runs late still finds the flight running instead of finding
        /// it ended and starting another.
        private let stampede = Mutex<(callers: Int, inFlight: @Sendable () -> Int)?>(nil)

        /// A stampede of `count` callers of `client` begins.
        func expectCallers(_ count: Int, of client: ConfidentialClient) {
            stampede.withLock { $0 = (count, { client.callersInFlight }) }
        }

        init(delay: Duration = .milliseconds(50), answer: @escaping @Sendable (Int) -> Result<JSONObject, TokenCacheError>) {
            self.delay = delay
            self.answer = answer
        }

        /// Answers every request with an app token numbered by the request.
        static func appTokens(delay: Duration = .milliseconds(50), refreshIn: Int? = nil) -> CountingEndpoint {
            CountingEndpoint(delay: delay) { number in
                var fields: JSONObject = [
                    "token_type": .string("Bearer"), "access_token": .string("at-\(number)"), "expires_in": .number("3599"),
                ]
                if let refreshIn { fields["refresh_in"] = .number(String(refreshIn)) }
                return .success(fields)
            }
        }

        var requests: Int { counts.withLock { $0.requests } }
        /// The grant and credential kind of each request, as "<grant> <kind>".
        var forms: [String] { counts.withLock { $0.forms } }

        func redeem(refreshToken: String, clientId: String, scopes: Scopes, endpoint: String, timeout: Duration) async throws
            -> TokenResponse
        {
            throw TokenCacheError(.invalidArgument, "no refresh tokens here")
        }

        func requestToken(grant: ConfidentialGrant, clientId: String, scopes: Scopes, endpoint: String, timeout: Duration)
            async throws -> TokenResponse
        {
            let number = counts.withLock { counts in
                counts.requests += 1
                let name: String
                switch grant {
                case .clientCredentials: name = "client_credentials"
                case .onBehalfOf: name = "obo"
                case .sessionRefreshToken(let refreshToken, _): name = "session-refresh \(refreshToken)"
                }
                counts.forms.append("\(name) \(grant.credential.kind.rawValue)")
                return counts.requests
            }
            let deadline = ContinuousClock.now + .seconds(10)
            // Taken: the requests after the stampede's (a renewal, a later call) wait for nobody.
            let taken = stampede.withLock { stampede in
                defer { stampede = nil }
                return stampede
            }
            if let (callers, inFlight) = taken {
                while inFlight() < callers, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(1))
                }
            }
            try await Task.sleep(for: delay)
            return try TokenResponse(fields: try answer(number).get())
        }
    }

    /// A token endpoint that holds every request until ``open()``: app tokens numbered by request.
    final class GatedEndpoint: TokenEndpointClient {
        private let answers = CountingEndpoint.appTokens(delay: .zero)
        private let state = Mutex<(arrived: Int, open: Bool, held: [CheckedContinuation<Void, Never>])>((0, false, []))

        /// How many requests have arrived, held or answered.
        var arrived: Int { state.withLock { $0.arrived } }

        /// Answers the held requests and every later one at once.
        func open() {
            let held = state.withLock { state in
                state.open = true
                defer { state.held = [] }
                return state.held
            }
            for request in held { request.resume() }
        }

        func redeem(refreshToken: String, clientId: String, scopes: Scopes, endpoint: String, timeout: Duration) async throws
            -> TokenResponse
        {
            throw TokenCacheError(.invalidArgument, "no refresh tokens here")
        }

        func requestToken(grant: ConfidentialGrant, clientId: String, scopes: Scopes, endpoint: String, timeout: Duration)
            async throws -> TokenResponse
        {
            await withCheckedContinuation { request in
                let open = state.withLock { state in
                    state.arrived += 1
                    if !state.open { state.held.append(request) }
                    return state.open
                }
                if open { request.resume() }
            }
            return try await answers.requestToken(
                grant: grant, clientId: clientId, scopes: scopes, endpoint: endpoint, timeout: timeout)
        }
    }

    static let graph: Scopes = ["https://graph.microsoft.com/.default"]
    static let secret = ClientCredential.secret("s3cret-value")

    static func client(_ group: CacheGroup, _ endpoint: CountingEndpoint, kind: ClientCredential.Kind = .secret) throws
        -> ConfidentialClient
    {
        ConfidentialClient(cache: try AppTokenTests.cache(group), credentialKind: kind, endpoint: endpoint)
    }

    /// Asks for `scopes` from `tasks` tasks at once; their outcomes. `endpoint`, the client's,
    /// answers no request before every task is in the request in flight.
    static func stampede(
        _ client: ConfidentialClient, tasks: Int, scopes: Scopes = graph, endpoint: CountingEndpoint
    ) async throws -> [Result<ConfidentialClient.Acquired, TokenCacheError>] {
        let authority = try AppTokenTests.authority()
        endpoint.expectCallers(tasks, of: client)
        return await withTaskGroup(of: Result<ConfidentialClient.Acquired, TokenCacheError>.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    do {
                        return .success(
                            try await client.acquireAppToken(for: scopes, authority: authority, credential: Self.secret))
                    } catch let error as TokenCacheError {
                        return .failure(error)
                    } catch {
                        return .failure(TokenCacheError(.network, "unexpected \(type(of: error))"))
                    }
                }
            }
            var outcomes: [Result<ConfidentialClient.Acquired, TokenCacheError>] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
    }

    @Test func sixtyFourTasksMissingOneExpiredTokenMakeOneRequest() async throws {
        let clock = TestClock()
        let group = try CacheGroup(name: "test", store: MemoryStore(name: "test"), clock: clock.closure)
        let endpoint = CountingEndpoint.appTokens()
        let client = try Self.client(group, endpoint)
        _ = try await client.acquireAppToken(for: Self.graph, authority: try AppTokenTests.authority(), credential: Self.secret)
        #expect(endpoint.requests == 1)
        clock.now += 3599  // expired

        let outcomes = try await Self.stampede(client, tasks: 64, endpoint: endpoint)
        #expect(endpoint.requests == 2)
        let secrets = Set(outcomes.map { try? $0.get().token.secret })
        #expect(secrets == ["at-2"])
        // And the token is now served from the cache.
        let again = try await client.acquireAppToken(
            for: Self.graph, authority: try AppTokenTests.authority(), credential: Self.secret)
        #expect(again.isFromCache && again.token.secret == "at-2")
        #expect(endpoint.requests == 2)
        #expect(endpoint.forms.allSatisfy { $0 == "client_credentials secret" })
    }

    /// 100 rounds against an authority that fails every other request: in each round every
    /// waiter gets the round's token or its typed error, and none hangs.
    @Test func aFailureIsDeliveredToEveryWaiterAndNoneHangs() async throws {
        let clock = TestClock()
        let group = try CacheGroup(name: "test", store: MemoryStore(name: "test"), clock: clock.closure)
        let endpoint = CountingEndpoint(delay: .milliseconds(50)) { number in
            number % 2 == 0
                ? .failure(TokenCacheError(.serverError, "the token endpoint answered HTTP 500 (temporarily_unavailable)"))
                : .success([
                    "token_type": .string("Bearer"), "access_token": .string("at-\(number)"), "expires_in": .number("3599"),
                ])
        }
        let client = try Self.client(group, endpoint)
        for round in 1...100 {
            clock.now += 3600  // the previous round's token has expired
            let outcomes = try await Self.stampede(client, tasks: 16, endpoint: endpoint)
            #expect(endpoint.requests == round, "round \(round)")
            if round % 2 == 0 {
                #expect(outcomes.allSatisfy { (try? $0.get()) == nil }, "round \(round)")
                #expect(outcomes.allSatisfy { if case .failure(let error) = $0 { error.code == .serverError } else { false } })
            } else {
                #expect(Set(outcomes.map { try? $0.get().token.secret }) == ["at-\(round)"], "round \(round)")
            }
        }
    }

    /// Past `refresh_on` the cached token is served at once and one renewal runs in the
    /// background; a failing renewal keeps the token served.
    @Test func pastRefreshOnTheTokenIsServedAndRenewedOnceInTheBackground() async throws {
        let clock = TestClock()
        let group = try CacheGroup(name: "test", store: MemoryStore(name: "test"), clock: clock.closure)
        let failing = Mutex(false)
        let endpoint = CountingEndpoint(delay: .milliseconds(50)) { number in
            if failing.withLock({ $0 }) { return .failure(TokenCacheError(.network, "the authority is unreachable")) }
            return .success([
                "token_type": .string("Bearer"), "access_token": .string("at-\(number)"), "expires_in": .number("3599"),
                "refresh_in": .number("1800"),
            ])
        }
        let client = try Self.client(group, endpoint)
        let authority = try AppTokenTests.authority()
        _ = try await client.acquireAppToken(for: Self.graph, authority: authority, credential: Self.secret)
        clock.now += 1800

        let served = try await Self.stampede(client, tasks: 16, endpoint: endpoint)
        #expect(served.allSatisfy { (try? $0.get()).map { $0.isFromCache && $0.token.secret == "at-1" } ?? false })
        try await Self.waitUntil { try group.index().countByKind[.accessToken] == 1 && endpoint.requests == 2 }
        try await Self.waitUntil { try client.cache.appToken(for: Self.graph, authority: authority)?.token.secret == "at-2" }
        #expect(endpoint.requests == 2)

        // The renewal fails: the still-valid token is served all the same. The renewal that
        // stored at-2 ends just after storing it, and a call made before it has ended joins it
        // rather than starting another: on a loaded machine the first calls here may do so.
        clock.now += 1800
        failing.withLock { $0 = true }
        for _ in 0..<1000 where endpoint.requests < 3 {
            let stillServed = try await client.acquireAppToken(for: Self.graph, authority: authority, credential: Self.secret)
            #expect(stillServed.isFromCache && stillServed.token.secret == "at-2")
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(endpoint.requests == 3, "a call past refresh_on started no renewal within 10 s")
    }

    /// Two groups in memory with one name (every `CacheGroup(inMemory:)` takes the default one)
    /// are two groups: a request for a token in one never waits for the same request in the
    /// other, which holds the refresh lock meanwhile.
    @Test func memoryGroupsOfOneNameDoNotWaitForEachOthersRequests() async throws {
        let authority = try AppTokenTests.authority()
        let held = GatedEndpoint()
        let first = ConfidentialClient(
            cache: try AppTokenTests.cache(CacheGroup(inMemory: "one-name")), credentialKind: .secret, endpoint: held,
            timeout: .seconds(1))
        let waiting = Task { try await first.acquireAppToken(for: Self.graph, authority: authority, credential: Self.secret) }
        try await Self.waitUntil { held.arrived == 1 }

        let other = CountingEndpoint.appTokens()
        let second = ConfidentialClient(
            cache: try AppTokenTests.cache(CacheGroup(inMemory: "one-name")), credentialKind: .secret, endpoint: other,
            timeout: .seconds(1))
        let answered = try await second.acquireAppToken(for: Self.graph, authority: authority, credential: Self.secret)
        #expect(!answered.isFromCache && answered.token.secret == "at-1" && other.requests == 1)
        #expect(held.arrived == 1, "the first group's request is still held")

        held.open()
        #expect(try await waiting.value.token.secret == "at-1")
    }

    @Test(arguments: [ClientCredential.Kind.secret, .certificate])
    func aCredentialOfTheWrongKindIsRefusedBeforeAnythingIsSent(configured: ClientCredential.Kind) async throws {
        let group = try Fixtures.group()
        let endpoint = CountingEndpoint.appTokens()
        let client = try Self.client(group, endpoint, kind: configured)
        let wrong: ClientCredential = configured == .secret ? .certificateAssertion("header.payload.signature") : Self.secret
        let error = await #expect(throws: TokenCacheError.self) {
            try await client.acquireAppToken(for: Self.graph, authority: try AppTokenTests.authority(), credential: wrong)
        }
        #expect(error?.code == .invalidArgument)
        #expect(error.map { !$0.message.contains("s3cret-value") && !$0.message.contains("header.payload") } ?? false)
        #expect(endpoint.requests == 0)
        #expect(try group.index().count == 0)
        // The right kind goes through.
        let right: ClientCredential = configured == .secret ? Self.secret : .certificateAssertion("header.payload.signature")
        _ = try await client.acquireAppToken(for: Self.graph, authority: try AppTokenTests.authority(), credential: right)
        #expect(endpoint.forms == ["client_credentials \(configured.rawValue)"])
    }

    @Test func onBehalfOfTokensAreRequestedOncePerAssertionAndServedFromTheCacheAfter() async throws {
        let group = try Fixtures.group()
        let endpoint = CountingEndpoint { number in
            .success(
                (try? Fixtures.response(
                    uid: OnBehalfOfTests.alice, accessToken: "at-obo-\(number)", scope: "api://downstream/Data.Read"))?
                    .fields ?? [:])
        }
        let client = ConfidentialClient(cache: try OnBehalfOfTests.cache(group), credentialKind: .certificate, endpoint: endpoint)
        let credential = ClientCredential.certificateAssertion("header.payload.signature")
        let first = try OnBehalfOfTests.assertion(OnBehalfOfTests.alice)
        let second = try OnBehalfOfTests.assertion(OnBehalfOfTests.bob)
        let authority = try OnBehalfOfTests.authority()
        let scopes = OnBehalfOfTests.downstream

        let results = try await withThrowingTaskGroup(of: ConfidentialClient.Acquired.self) { tasks in
            for number in 0..<32 {
                tasks.addTask {
                    try await client.acquireOnBehalfOfToken(
                        for: scopes, assertion: number % 2 == 0 ? first : second, authority: authority, credential: credential)
                }
            }
            var all: [ConfidentialClient.Acquired] = []
            for try await result in tasks { all.append(result) }
            return all
        }
        #expect(endpoint.requests == 2)
        #expect(Set(results.map(\.token.secret)).count == 2)
        let cached = try await client.acquireOnBehalfOfToken(
            for: scopes, assertion: first, authority: authority, credential: credential)
        #expect(cached.isFromCache)
        #expect(endpoint.requests == 2)
        #expect(endpoint.forms == ["obo certificate", "obo certificate"])
    }

    /// The form the HTTP client sends for each grant, and no credential in what it throws.
    @Test func theHTTPClientSendsEachGrantsFormAndLeaksNoCredential() async throws {
        final class Recorder: HTTPTransport {
            let forms = Mutex<[[String: String]]>([])
            func post(url: String, form: [(name: String, value: String)], timeout: Duration) async throws -> HTTPTransportResponse
            {
                forms.withLock { $0.append(Dictionary(form.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })) }
                return HTTPTransportResponse(
                    status: 401, body: Array(#"{"error":"invalid_client","error_description":"bad secret"}"#.utf8))
            }
        }
        let recorder = Recorder()
        let client = HTTPTokenEndpointClient(transport: recorder)
        let assertion = try OnBehalfOfTests.assertion(OnBehalfOfTests.alice)
        let grants: [ConfidentialGrant] = [
            .clientCredentials(Self.secret), .onBehalfOf(assertion, .certificateAssertion("c.e.rt")),
            .clientCredentials(Self.secret, parameters: ["fmi_path": "Agents/One"]),
            .sessionRefreshToken("rt-session", Self.secret),
        ]
        for grant in grants {
            let error = await #expect(throws: TokenCacheError.self) {
                try await client.requestToken(
                    grant: grant, clientId: "cid", scopes: Self.graph, endpoint: "https://x/t", timeout: .seconds(5))
            }
            #expect(error?.code == .serverError)
            #expect(error.map { !"\($0)".contains("s3cret-value") && !"\($0)".contains(assertion.jwt) } ?? false)
        }
        let forms = recorder.forms.withLock { $0 }
        #expect(forms[0]["grant_type"] == "client_credentials")
        #expect(forms[0]["client_secret"] == "s3cret-value")
        #expect(forms[0]["scope"] == "https://graph.microsoft.com/.default")
        #expect(forms[1]["grant_type"] == TokenCache.onBehalfOfGrant)
        #expect(forms[1]["requested_token_use"] == "on_behalf_of")
        #expect(forms[1]["assertion"] == assertion.jwt)
        #expect(forms[1]["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
        #expect(forms[1]["client_assertion"] == "c.e.rt")
        #expect(forms[1]["client_secret"] == nil)
        #expect(forms[0]["fmi_path"] == nil && forms[2]["fmi_path"] == "Agents/One")
        #expect(forms[3]["grant_type"] == "refresh_token" && forms[3]["refresh_token"] == "rt-session")
        #expect(forms[3]["client_secret"] == "s3cret-value" && forms[3]["client_info"] == "1")
    }

    /// Polls `condition` every 10 ms for up to 10 s; a failure names the caller's line.
    static func waitUntil(
        sourceLocation: SourceLocation = #_sourceLocation, _ condition: () throws -> Bool
    ) async throws {
        for _ in 0..<1000 {
            if try condition() { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("the condition did not hold within 10 s", sourceLocation: sourceLocation)
    }
}
