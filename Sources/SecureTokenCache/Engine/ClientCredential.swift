/// How a confidential client (a daemon, a web API) proves who it is to the token endpoint.
///
/// Passed to each acquisition and never stored: not in the cache, not in a log, not in an error.
public enum ClientCredential: Sendable {
    /// A client secret registered with the app. Never log it.
    case secret(String)
    /// A client assertion: a JWT the app signed with its certificate's private key (RFC 7523
    /// §2.2), sent as `client_assertion`. Never log it.
    case certificateAssertion(String)

    /// Which kind of credential an app is registered with.
    public enum Kind: String, Sendable {
        /// A client secret.
        case secret
        /// A certificate, proven by a signed client assertion.
        case certificate
    }

    /// The kind of this credential.
    public var kind: Kind {
        switch self {
        case .secret: .secret
        case .certificateAssertion: .certificate
        }
    }

    /// The form fields that present the credential.
    var formFields: [(name: String, value: String)] {
        switch self {
        case .secret(let secret): [("client_secret", secret)]
        case .certificateAssertion(let assertion):
            [
                ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
                ("client_assertion", assertion),
            ]
        }
    }
}

/// A confidential client's grant, as ``TokenEndpointClient/requestToken(grant:clientId:scopes:endpoint:timeout:)``
/// sends it.
public enum ConfidentialGrant: Sendable {
    /// The client's own token (RFC 6749 §4.4): an app-only token; `parameters` are sent with the
    /// request (such as `fmi_path`, ``TokenRequest/cacheKeyComponents``).
    case clientCredentials(ClientCredential, parameters: [String: String] = [:])
    /// A token for a downstream API on behalf of the user whose access token the web API
    /// received (the JWT-bearer grant, RFC 7523, with `requested_token_use=on_behalf_of`).
    case onBehalfOf(UserAssertion, ClientCredential)
    /// A long-running on-behalf-of session's refresh token, redeemed with the client's
    /// credential (the refresh-token grant of a confidential client, RFC 6749 §6).
    case sessionRefreshToken(String, ClientCredential)

    /// The credential the grant presents.
    public var credential: ClientCredential {
        switch self {
        case .clientCredentials(let credential, _), .onBehalfOf(_, let credential), .sessionRefreshToken(_, let credential):
            credential
        }
    }
}
