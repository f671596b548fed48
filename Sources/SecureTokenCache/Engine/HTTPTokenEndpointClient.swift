/// The default ``TokenEndpointClient``: a form-encoded POST (RFC 6749 §6) over an
/// ``HTTPTransport``, asking for `client_info` and the OIDC scopes as MSAL does, and a JSON
/// answer mapped to typed errors. Nothing it throws contains a token.
public struct HTTPTokenEndpointClient: TokenEndpointClient {
    /// The HTTP stack requests go through.
    public let transport: any HTTPTransport

    /// A client over `transport` (by default, a shared ephemeral `URLSession`).
    public init(transport: any HTTPTransport = URLSessionTransport.shared) {
        self.transport = transport
    }

    /// The client over the shared `URLSession` transport.
    public static let shared = HTTPTokenEndpointClient()

    /// The OAuth errors after which only the user can help (MSAL's "interaction required").
    static let interactionErrors: Set<String> = ["invalid_grant", "interaction_required"]

    /// Redeems a refresh token; see ``TokenEndpointClient/redeem(refreshToken:clientId:scopes:endpoint:timeout:)``.
    public func redeem(refreshToken: String, clientId: String, scopes: Scopes, endpoint: String, timeout: Duration) async throws
        -> TokenResponse
    {
        // MSAL always asks for the OIDC scopes, so the answer carries an id token and a new
        // refresh token; client_info=1 makes Entra ID send the home account id.
        let scope = Scopes(scopes.values + ["offline_access", "openid", "profile"])
        let form: [(name: String, value: String)] = [
            ("grant_type", "refresh_token"),
            ("refresh_token", refreshToken),
            ("client_id", clientId),
            ("scope", scope.values.joined(separator: " ")),
            ("client_info", "1"),
        ]
        return try await post(form, to: endpoint, timeout: timeout)
    }

    /// Requests a confidential client's token; see
    /// ``TokenEndpointClient/requestToken(grant:clientId:scopes:endpoint:timeout:)``.
    ///
    /// Client credentials ask for the resource's scopes only. On-behalf-of and a session's
    /// refresh ask, as MSAL does, for the OIDC scopes and `client_info` too, so the answer names
    /// the user.
    public func requestToken(grant: ConfidentialGrant, clientId: String, scopes: Scopes, endpoint: String, timeout: Duration)
        async throws -> TokenResponse
    {
        var form: [(name: String, value: String)]
        switch grant {
        case .clientCredentials(_, let parameters):
            form = [
                ("grant_type", "client_credentials"), ("client_id", clientId), ("scope", scopes.values.joined(separator: " ")),
            ]
            form += parameters.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        case .onBehalfOf(let assertion, _):
            let scope = Scopes(scopes.values + ["offline_access", "openid", "profile"])
            form = [
                ("grant_type", TokenCache.onBehalfOfGrant),
                ("client_id", clientId),
                ("assertion", assertion.jwt),
                ("requested_token_use", "on_behalf_of"),
                ("scope", scope.values.joined(separator: " ")),
                ("client_info", "1"),
            ]
        case .sessionRefreshToken(let refreshToken, _):
            let scope = Scopes(scopes.values + ["offline_access", "openid", "profile"])
            form = [
                ("grant_type", "refresh_token"),
                ("client_id", clientId),
                ("refresh_token", refreshToken),
                ("scope", scope.values.joined(separator: " ")),
                ("client_info", "1"),
            ]
        }
        form += grant.credential.formFields
        return try await post(form, to: endpoint, timeout: timeout)
    }

    /// Posts `form` and interprets the answer.
    private func post(_ form: [(name: String, value: String)], to endpoint: String, timeout: Duration) async throws
        -> TokenResponse
    {
        let answer: HTTPTransportResponse
        do {
            answer = try await transport.post(url: endpoint, form: form, timeout: timeout)
        } catch let error as TokenCacheError {
            throw error
        } catch is CancellationError {
            throw TokenCacheError(.network, "the token request was cancelled")
        } catch {
            throw TokenCacheError(.network, "the token request failed in the HTTP transport (\(type(of: error)))")
        }
        return try Self.interpret(answer)
    }

    /// Maps an HTTP answer to a token response or a typed error.
    static func interpret(_ answer: HTTPTransportResponse) throws -> TokenResponse {
        let parsed = try? JSONParser.parse(answer.body)
        let object: JSONObject?
        if case .object(let value)? = parsed { object = value } else { object = nil }

        if (200..<300).contains(answer.status), let object, object["error"] == nil {
            // Missing or mistyped fields throw .malformedResponse, before anything is stored.
            return try TokenResponse(fields: object)
        }
        guard let object else {
            throw TokenCacheError(
                .serverError, "the token endpoint answered HTTP \(answer.status) with something that is not JSON; retry later",
                server: .init(httpStatus: answer.status))
        }
        let server = TokenCacheError.ServerResponse(
            error: object.string("error"), suberror: object.string("suberror"), correlationId: object.string("correlation_id"),
            httpStatus: answer.status)
        if let error = server.error, interactionErrors.contains(error), answer.status < 500 {
            throw TokenCacheError(
                .interactionRequired, "the authority requires the user to sign in again (\(error)); start an interactive sign-in",
                server: server)
        }
        throw TokenCacheError(
            .serverError,
            "the token endpoint answered HTTP \(answer.status) (\(server.error ?? "no error code")); retry later or check the app's registration",
            server: server)
    }
}
