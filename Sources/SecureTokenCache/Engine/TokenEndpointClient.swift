/// Redeems refresh tokens, and a confidential client's grants, at an OAuth 2.0 token endpoint.
/// ``HTTPTokenEndpointClient`` is the default; conform to it to use another protocol stack (a
/// broker, a test double).
public protocol TokenEndpointClient: Sendable {
    /// Redeems `refreshToken` (RFC 6749 §6) for `scopes` on behalf of `clientId` at `endpoint`.
    ///
    /// Returns the validated token response. Throws `TokenCacheError`: `.interactionRequired`
    /// when the server answers `invalid_grant` or `interaction_required` (with its error,
    /// suberror and correlation id in `server`), `.serverError` for any other error answer or
    /// an answer that is not JSON, `.network` when the endpoint could not be reached or did not
    /// answer within `timeout`, `.malformedResponse` for a token response missing fields.
    func redeem(refreshToken: String, clientId: String, scopes: Scopes, endpoint: String, timeout: Duration) async throws
        -> TokenResponse

    /// Requests a token with a confidential client's `grant` (client credentials, on-behalf-of)
    /// for `scopes` on behalf of `clientId` at `endpoint`.
    ///
    /// Returns the validated token response; throws as
    /// ``redeem(refreshToken:clientId:scopes:endpoint:timeout:)`` does. Nothing it throws
    /// contains the credential or the assertion. The default implementation throws
    /// `.invalidArgument`: a client that only redeems refresh tokens serves no server app.
    func requestToken(grant: ConfidentialGrant, clientId: String, scopes: Scopes, endpoint: String, timeout: Duration)
        async throws -> TokenResponse
}

extension TokenEndpointClient {
    /// Throws `.invalidArgument`: this client implements only refresh-token redemption.
    public func requestToken(grant: ConfidentialGrant, clientId: String, scopes: Scopes, endpoint: String, timeout: Duration)
        async throws -> TokenResponse
    {
        throw TokenCacheError(
            .invalidArgument,
            "this TokenEndpointClient (\(type(of: self))) does not implement confidential-client grants; use HTTPTokenEndpointClient"
        )
    }
}
