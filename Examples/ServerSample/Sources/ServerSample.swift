import Foundation
import Hummingbird
import Logging
import SecureTokenCache

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A web API that calls two downstream APIs: one on behalf of the user who called it (the
/// on-behalf-of flow, with the bearer token it received), one with its own app-only token.
///
/// Every token comes from one ``ConfidentialClient`` over a bounded in-memory group: a caller's
/// second request is served from the cache, callers that arrive together make one token request,
/// and the cache never grows past its limit however many callers there are.
///
/// Settings come from the environment (`scripts/server-sample` sets them for the fake
/// authority): `STC_SAMPLE_AUTHORITY` (the authority's base URL), `STC_SAMPLE_TENANT`,
/// `STC_SAMPLE_CLIENT_ID`, `STC_SAMPLE_CLIENT_SECRET`, `STC_SAMPLE_DOWNSTREAM` (the downstream
/// API's URL), `STC_SAMPLE_PORT`.
@main struct ServerSample {
    static func main() async throws {
        let environment = ProcessInfo.processInfo.environment
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
        var configuration = CacheConfiguration(store: .memory, logger: logger)
        configuration.memoryLimit = 64 << 20
        let group = try CacheGroup.open("com.contoso.web-api", configuration: configuration)
        let cache = try TokenCache(clientId: try setting("STC_SAMPLE_CLIENT_ID"), group: group)
        let client = ConfidentialClient(cache: cache, credentialKind: .secret)
        let api = WebAPI(client: client, authority: authority, credential: secret, downstream: downstream)

        let router = Router()
        router.get("health") { _, _ in "ok" }
        router.get("me/downstream") { request, _ in try await api.callDownstreamForCaller(request) }
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
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else {
            throw HTTPError(.unauthorized, message: "send a bearer token")
        }
        do {
            // A real web API validates the token (signature, audience, expiry) first.
            let assertion = try UserAssertion(String(header.dropFirst("Bearer ".count)))
            let acquired = try await client.acquireOnBehalfOfToken(
                for: Self.userScopes, assertion: assertion, authority: authority, credential: credential)
            return try await call(with: acquired)
        } catch let error as TokenCacheError {
            throw Self.httpError(error)
        }
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
