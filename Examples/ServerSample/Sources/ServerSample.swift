import Foundation
import Hummingbird
import Logging
import SecureTokenCache
import SecureTokenCachePostgres

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A web API that calls two downstream APIs: one on behalf of the user who called it (the
/// on-behalf-of flow, with the bearer token it received), one with its own app-only token.
///
/// Every token comes from one ``ConfidentialClient`` over a bounded group: a caller's second
/// request is served from the cache, callers that arrive together make one token request, and
/// the process never holds more of the cache than its limit however many callers there are.
/// The group is in memory, or, for a fleet of instances, in a PostgreSQL database they share: a
/// caller served by one instance is then served by every other from the cache, a sign-out on one
/// reaches the others, and an instance that restarts finds its tokens there.
///
/// Settings come from the environment (`scripts/server-sample` and `scripts/demo-fleet` set
/// them for the fake authority): `STC_SAMPLE_AUTHORITY` (the authority's base URL),
/// `STC_SAMPLE_TENANT`, `STC_SAMPLE_CLIENT_ID`, `STC_SAMPLE_CLIENT_SECRET`,
/// `STC_SAMPLE_DOWNSTREAM` (the downstream API's URL), `STC_SAMPLE_PORT`; for a fleet,
/// `STC_SAMPLE_POSTGRES_URL` (the database, `postgres://user:password@host:port/database`) and
/// `STC_SAMPLE_CACHE_PASSPHRASE` (the passphrase that seals the group, the same on every
/// instance).
@main struct ServerSample {
    static func main() async throws {
        let environment = ProcessInfo.processInfo.environment
        let passphraseVariable = "STC_SAMPLE_CACHE_PASSPHRASE"
        func setting(_ name: String) throws -> String {
            guard let value = environment[name], !value.isEmpty else { throw SampleError.missingSetting(name) }
            return value
        }
        let authority = try Authority("\(try setting("STC_SAMPLE_AUTHORITY"))/\(try setting("STC_SAMPLE_TENANT"))")
        let secret = ClientCredential.secret(try setting("STC_SAMPLE_CLIENT_SECRET"))
        let downstream = try setting("STC_SAMPLE_DOWNSTREAM")
        let port = Int(environment["STC_SAMPLE_PORT"] ?? "") ?? 8080

        var logger = Logger(label: "stc-server-sample")
        logger.logLevel = .info
        let group: CacheGroup
        if let url = environment["STC_SAMPLE_POSTGRES_URL"], !url.isEmpty {
            _ = try setting(passphraseVariable)
            var configuration = CacheConfiguration(
                keySource: .passphraseFromEnvironment(variable: passphraseVariable), logger: logger)
            // The first level: the callers this instance serves, the rest stays in the database.
            configuration.memoryLimit = 64 << 20
            group = try CacheGroup.open(
                "com.contoso.web-api", postgres: try PostgresStoreConfiguration(url: url), configuration: configuration)
        } else {
            var configuration = CacheConfiguration(store: .memory, logger: logger)
            configuration.memoryLimit = 64 << 20
            group = try CacheGroup.open("com.contoso.web-api", configuration: configuration)
        }
        let cache = try TokenCache(clientId: try setting("STC_SAMPLE_CLIENT_ID"), group: group)
        let client = ConfidentialClient(cache: cache, credentialKind: .secret)
        let api = WebAPI(client: client, authority: authority, credential: secret, downstream: downstream)

        let router = Router()
        router.get("health") { _, _ in "ok" }
        router.get("me/downstream") { request, _ in try await api.callDownstreamForCaller(request) }
        router.get("me/cached") { request, _ in try api.cachedForCaller(request) }
        router.post("me/sign-out") { request, _ in try api.signOutCaller(request) }
        router.get("report") { _, _ in try await api.callDownstreamAsApp() }
        router.get("cache") { _, _ in
            CacheStatus(bytes: group.memoryUse ?? 0, partitions: try group.partitions().count)
        }
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
        try await app.runService()
    }
}

/// The web API's two calls.
struct WebAPI: Sendable {
    let client: ConfidentialClient
    let authority: Authority
    let credential: ClientCredential
    let downstream: String

    /// The downstream API's scopes for the caller's data, and for the app's own.
    static let userScopes: Scopes = ["api://downstream/Data.Read"]
    static let appScopes: Scopes = ["api://downstream/.default"]

    /// Calls the downstream API on behalf of the user whose bearer token `request` carries.
    func callDownstreamForCaller(_ request: Request) async throws -> DownstreamAnswer {
        do {
            let assertion = try Self.assertion(of: request)
            let acquired = try await client.acquireOnBehalfOfToken(
                for: Self.userScopes, assertion: assertion, authority: authority, credential: credential)
            return try await call(with: acquired)
        } catch let error as TokenCacheError {
            throw Self.httpError(error)
        }
    }

    /// Whether the cache holds a downstream token for the caller of `request`: a lookup only,
    /// nothing is asked of the authority.
    func cachedForCaller(_ request: Request) throws -> CachedAnswer {
        do {
            let assertion = try Self.assertion(of: request)
            return CachedAnswer(
                cached: try client.cache.onBehalfOfToken(for: Self.userScopes, assertion: assertion, authority: authority) != nil)
        } catch let error as TokenCacheError {
            throw Self.httpError(error)
        }
    }

    /// Signs the caller of `request` out of the web API: forgets every token redeemed from its
    /// bearer token (its on-behalf-of partition), on every instance sharing the group.
    func signOutCaller(_ request: Request) throws -> SignOutAnswer {
        do {
            let assertion = try Self.assertion(of: request)
            // A lookup first: an instance that keeps only part of the group in memory loads the
            // caller's partition, so that clearing it finds what the database holds.
            _ = try client.cache.onBehalfOfToken(for: Self.userScopes, assertion: assertion, authority: authority)
            do {
                let removed = try client.cache.group.clear(.partition(CachePartition.onBehalfOf(assertion).key))
                return SignOutAnswer(removed: removed.count)
            } catch let error as TokenCacheError where error.code == .notFound {
                return SignOutAnswer(removed: 0)
            }
        } catch let error as TokenCacheError {
            throw Self.httpError(error)
        }
    }

    /// The caller's bearer token, as the assertion of an on-behalf-of request.
    private static func assertion(of request: Request) throws -> UserAssertion {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else {
            throw HTTPError(.unauthorized, message: "send a bearer token")
        }
        // A real web API validates the token (signature, audience, expiry) first.
        return try UserAssertion(String(header.dropFirst("Bearer ".count)))
    }

    /// Calls the downstream API as the web API itself, with an app-only token.
    func callDownstreamAsApp() async throws -> DownstreamAnswer {
        do {
            let acquired = try await client.acquireAppToken(for: Self.appScopes, authority: authority, credential: credential)
            return try await call(with: acquired)
        } catch let error as TokenCacheError {
            throw Self.httpError(error)
        }
    }

    private func call(with acquired: ConfidentialClient.Acquired) async throws -> DownstreamAnswer {
        var request = URLRequest(url: URL(string: downstream)!)
        request.setValue("Bearer \(acquired.token.secret)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw HTTPError(.badGateway, message: "the downstream API refused the token")
        }
        return DownstreamAnswer(
            downstream: try JSONDecoder().decode([String: String].self, from: data), tokenFromCache: acquired.isFromCache)
    }

    /// What the web API's own caller is told: the challenge when it must sign in again, never a
    /// token or a secret.
    static func httpError(_ error: TokenCacheError) -> HTTPError {
        switch error.code {
        case .interactionRequired:
            HTTPError(.unauthorized, headers: [.wwwAuthenticate: "Bearer error=\"invalid_token\""], message: error.message)
        case .invalidArgument: HTTPError(.badRequest, message: error.message)
        default: HTTPError(.badGateway, message: "the token could not be acquired (\(error.code.name))")
        }
    }
}

/// What `/me/downstream` and `/report` answer.
struct DownstreamAnswer: ResponseEncodable {
    /// What the downstream API said.
    let downstream: [String: String]
    /// Whether the token came from the cache.
    let tokenFromCache: Bool
}

/// What `/me/cached` answers.
struct CachedAnswer: ResponseEncodable {
    /// Whether a downstream token for the caller is in the cache.
    let cached: Bool
}

/// What `/me/sign-out` answers.
struct SignOutAnswer: ResponseEncodable {
    /// How many entries were removed from the cache.
    let removed: Int
}

/// What `/cache` answers.
struct CacheStatus: ResponseEncodable {
    /// The bytes the cache counts against its limit.
    let bytes: Int
    /// Its partitions: one per caller, one per tenant of the app.
    let partitions: Int
}

enum SampleError: Error, CustomStringConvertible {
    case missingSetting(String)

    var description: String {
        switch self {
        case .missingSetting(let name): "set \(name) (scripts/server-sample sets every setting)"
        }
    }
}
