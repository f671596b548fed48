/// Long-running on-behalf-of sessions: a web API that starts work for its caller which outlives
/// the caller's token (a report, a batch job) keeps the on-behalf-of tokens under a session key,
/// with their refresh token, and renews them later without the assertion (MSAL.NET's
/// `InitiateLongRunningProcessInWebApi` and `AcquireTokenInLongRunningProcess`).
///
/// The session's tokens carry the session key as `user_assertion_hash`, as MSAL.NET stores them:
/// only a lookup with the same key finds them, its refresh token redeems for that session only,
/// and the user's own sign-in never uses it.
extension TokenCache {
    /// The grant type of a session's renewal (a refresh token redeemed by a confidential client).
    public static let refreshTokenGrant = "refresh_token"

    /// The cached access token of the long-running session `sessionKey` for `scopes`, or `nil`.
    ///
    /// - Parameters:
    ///   - scopes: the downstream API's scopes.
    ///   - sessionKey: the key the session was started under
    ///     (``ConfidentialClient/LongRunningSession/key``).
    ///   - authority: the cloud and the tenant the session's tokens are for (a tenant, not a
    ///     multi-tenant alias: without the assertion there is no `tid` to stand for it).
    /// - Throws: ``TokenCacheError``: `.invalidArgument` for empty scopes, an empty session key or
    ///   a multi-tenant authority; the store's errors when catching up with other processes.
    public func longRunningToken(for scopes: Scopes, sessionKey: String, authority: Authority) throws
        -> CachedAccessToken?
    {
        let key = try Self.sessionIndexKey(sessionKey)
        try Self.checkOnBehalfOfScopes(scopes)
        let tenant = try Self.sessionTenant(of: authority)
        return try onBehalfOfToken(for: scopes, key: key, tenant: tenant, authority: authority)
    }

    /// Stores a response for the long-running session `sessionKey` in one transaction: the access
    /// token and the refresh token under the session key, and the user's account and id token.
    ///
    /// - Parameters:
    ///   - response: the token endpoint's answer: to the on-behalf-of request that starts the
    ///     session (grant type ``onBehalfOfGrant``), or to the session's refresh
    ///     (``refreshTokenGrant``).
    ///   - request: the request: this cache's client id, one of those grant types, the downstream
    ///     scopes and the authority (for a start, a multi-tenant one stands for `assertion`'s
    ///     tenant).
    ///   - sessionKey: the session's key.
    ///   - assertion: the assertion a start redeemed (its tenant), `nil` for a renewal.
    /// - Returns: the access token as stored.
    /// - Throws: ``TokenCacheError``, and nothing is stored: `.invalidArgument` for another
    ///   client's request, another grant type, empty scopes or session key, or a multi-tenant
    ///   authority the tenant cannot be told for; `.malformedResponse` for a response without
    ///   `expires_in`; the store's errors.
    @discardableResult
    public func storeLongRunningToken(
        _ response: TokenResponse, for request: TokenRequest, sessionKey: String, assertion: UserAssertion? = nil
    ) throws -> AccessToken {
        _ = try Self.sessionIndexKey(sessionKey)
        let grant = request.grantType == Self.refreshTokenGrant ? Self.refreshTokenGrant : Self.onBehalfOfGrant
        try checkRequest(
            request, grant: grant,
            "storeLongRunningToken(_:for:sessionKey:assertion:) stores the answers to a session's start (grant type "
                + "\"urn:ietf:params:oauth:grant-type:jwt-bearer\") or renewal (\"refresh_token\")")
        let tenant =
            try assertion.map { try Self.onBehalfOfTenant(of: request.authority, assertion: $0) }
            ?? Self.sessionTenant(of: request.authority)
        let ingest = try onBehalfOfIngest(response, for: request, tenant: tenant, filing: .session(sessionKey))
        let environment = request.authority.environment
        return try group.write { transaction in
            let redeemed = transaction.index.onBehalfOfRefreshTokens(
                session: try Self.sessionIndexKey(sessionKey), environment: environment, client: client
            ).first
            return ingest.apply(to: &transaction, redeemed: redeemed?.id, signIn: false)
        }
    }

    /// The refresh token of the long-running session `sessionKey` in `authority`'s cloud, if the
    /// group has one.
    func longRunningRefreshToken(sessionKey: String, authority: Authority) throws -> RefreshToken? {
        let session = try Self.sessionIndexKey(sessionKey)
        let stored = try group.find(in: .onBehalfOf(key: session)) { snapshot in
            snapshot.index.onBehalfOfRefreshTokens(session: session, environment: authority.environment, client: client).first
        }
        guard case .refreshToken(let token)? = stored?.entry else { return nil }
        return token
    }

    /// The index key of a session key; refuses an empty one.
    static func sessionIndexKey(_ sessionKey: String) throws -> HashedString {
        guard let key = UserAssertion.key(of: sessionKey) else {
            throw TokenCacheError(.invalidArgument, "a long-running session needs a key that is not empty")
        }
        return key
    }

    /// The tenant of a session's tokens: `authority`'s, which must name one.
    static func sessionTenant(of authority: Authority) throws -> String {
        guard !authority.isMultiTenant else {
            throw TokenCacheError(
                .invalidArgument,
                "a long-running session's tokens are looked up without the assertion: use the tenant's authority, not \"\(authority.tenant)\""
            )
        }
        return authority.tenant
    }
}
