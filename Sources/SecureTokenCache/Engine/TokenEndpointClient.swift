/// Redeems refresh tokens at an OAuth 2.0 token endpoint. ``HTTPTokenEndpointClient`` is the
/// default; conform to it to use another protocol stack (a broker, a test double).
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
}
