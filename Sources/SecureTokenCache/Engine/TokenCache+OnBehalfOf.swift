import HashTreeCollections

/// On-behalf-of (OBO) tokens: what a web API gets for a downstream API by redeeming the access
/// token its caller sent (the OAuth JWT-bearer grant, RFC 7523).
///
/// An OBO access token is filed under the hash of the assertion it was redeemed from
/// (``UserAssertion/hash``, stored as `user_assertion_hash`, MSAL.NET's member), so only a
/// caller presenting the same assertion is served it: not another caller, not a silent lookup
/// for the user's account, not an app-token lookup. Tokens other SDKs stored are found too,
/// whichever way they wrote the hash (msal-node's `userAssertionHash`, Go's padded Base64).
/// msal-python stores OBO tokens without a hash, as a plain user's tokens: those answer
/// ``accessToken(for:account:authority:)`` for the user, as they do in msal-python.
extension TokenCache {
    /// The grant type of an on-behalf-of token request.
    public static let onBehalfOfGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    /// The cached on-behalf-of access token for `scopes` redeemed from `assertion`, or `nil`.
    ///
    /// ```swift
    /// let assertion = try UserAssertion(incomingBearerToken)
    /// if let cached = try cache.onBehalfOfToken(for: scopes, assertion: assertion, authority: authority) {
    ///     send(authorization: "Bearer \(cached.token.secret)")
    /// }
    /// ```
    ///
    /// A token within 300 s of expiry counts as expired; ``CachedAccessToken/shouldRefresh``
    /// says that `refresh_on` has passed. Scopes match case-insensitively, as a subset of the
    /// token's. Among several matches the one that lives longest wins.
    ///
    /// - Parameters:
    ///   - scopes: the downstream API's scopes.
    ///   - assertion: the access token the web API received.
    ///   - authority: the cloud and the tenant. A multi-tenant authority (`common`,
    ///     `organizations`) stands for the tenant the assertion was issued in (its `tid`).
    /// - Returns: the token, or `nil` when none is valid for 300 s more.
    /// - Throws: ``TokenCacheError``: `.invalidArgument` for empty scopes, or a multi-tenant
    ///   authority with an assertion that names no tenant; the store's errors when catching up
    ///   with other processes' writes.
    public func onBehalfOfToken(for scopes: Scopes, assertion: UserAssertion, authority: Authority) throws
        -> CachedAccessToken?
    {
        try Self.checkOnBehalfOfScopes(scopes)
        let tenant = try Self.onBehalfOfTenant(of: authority, assertion: assertion)
        return try onBehalfOfToken(for: scopes, key: assertion.key, tenant: tenant, authority: authority)
    }

    /// The cached on-behalf-of token filed under the assertion key `key` (an assertion's hash or
    /// a long-running session's key) in `tenant`.
    func onBehalfOfToken(for scopes: Scopes, key: HashedString, tenant: String, authority: Authority) throws
        -> CachedAccessToken?
    {
        let now = group.clock()
        let found = try group.find(in: .onBehalfOf(key: key)) { snapshot in
            let realm = snapshot.index.tenantAliases[tenant] ?? tenant
            let bucket = AccessTokenBucket(
                account: key, environment: authority.environment.groupKey, realm: HashedString(realm), client: clientKey,
                tokenType: .bearer, extCacheKey: .empty)
            return snapshot.index.onBehalfOfAccessToken(in: bucket, scopes: scopes, now: now)
        }
        if let found { noteUse(of: found) }
        return found.map { CachedAccessToken(token: $0, shouldRefresh: $0.shouldRefresh(at: now)) }
    }

    /// Stores an on-behalf-of response in one transaction: the access token, filed under the
    /// assertion's hash, and the user's account and id token when the response carries them.
    ///
    /// The refresh token of the response is not kept, as in MSAL.NET: a new assertion is
    /// redeemed afresh, and a refresh token filed under the user would let any caller act as
    /// that user. Tokens redeemed from the same assertion whose scopes intersect the new one's
    /// are replaced. No SDK reads what another wrote for OBO; this writes MSAL.NET's member.
    ///
    /// - Parameters:
    ///   - response: the token endpoint's answer to the on-behalf-of request.
    ///   - request: the request: this cache's client id, grant type ``onBehalfOfGrant``, the
    ///     downstream scopes and the authority (a multi-tenant one stands for the assertion's
    ///     tenant).
    ///   - assertion: the assertion the request redeemed. Only its hash is stored.
    /// - Returns: the access token as stored.
    /// - Throws: ``TokenCacheError``, and nothing is stored: `.invalidArgument` for another
    ///   client's request, another grant type, empty scopes, or a multi-tenant authority with
    ///   an assertion that names no tenant; `.malformedResponse` for a response without
    ///   `expires_in`; and the store's errors (`.lockTimeout`, `.diskFull`, ...).
    @discardableResult
    public func storeOnBehalfOfToken(_ response: TokenResponse, for request: TokenRequest, assertion: UserAssertion) throws
        -> AccessToken
    {
        try checkRequest(
            request, grant: Self.onBehalfOfGrant,
            "storeOnBehalfOfToken(_:for:assertion:) stores on-behalf-of responses "
                + "(grant type \"urn:ietf:params:oauth:grant-type:jwt-bearer\")")
        let tenant = try Self.onBehalfOfTenant(of: request.authority, assertion: assertion)
        let ingest = try onBehalfOfIngest(response, for: request, tenant: tenant, filing: .assertion(assertion))
        return try group.write { transaction in ingest.apply(to: &transaction, signIn: false) }
    }

    /// The entries of an on-behalf-of response (a start or a renewal of a long-running session
    /// too), checked: scopes named, `expires_in` given; filed under `tenant` (a multi-tenant
    /// authority's tokens go under the assertion's tenant, where the lookups through either
    /// authority find them).
    func onBehalfOfIngest(
        _ response: TokenResponse, for request: TokenRequest, tenant: String, filing: Ingest.OnBehalfOfFiling
    ) throws -> Ingest {
        try Self.checkOnBehalfOfScopes(request.scopes)
        guard response.expiresIn != nil else {
            throw TokenCacheError(.malformedResponse, "the on-behalf-of response has no expires_in; nothing was stored")
        }
        var filed = request
        if tenant != request.authority.tenant { filed.authority = try Authority("\(request.authority.base)/\(tenant)") }
        return try Ingest(response: response, request: filed, now: group.clock(), onBehalfOf: filing)
    }

    /// The tenant an on-behalf-of token of `authority` is filed under: the authority's, or the
    /// assertion's when the authority is multi-tenant.
    static func onBehalfOfTenant(of authority: Authority, assertion: UserAssertion) throws -> String {
        guard authority.isMultiTenant else { return authority.tenant }
        guard let tenant = assertion.tenantId else {
            throw TokenCacheError(
                .invalidArgument,
                "the authority names no tenant and the user assertion has no tid claim: use the tenant's authority")
        }
        return tenant.lowercased()
    }

    /// Rejects a request that names no scope: it would match any of the caller's tokens.
    static func checkOnBehalfOfScopes(_ scopes: Scopes) throws {
        guard !scopes.isEmptyForMatching else {
            throw TokenCacheError(.invalidArgument, "an on-behalf-of token needs the downstream API's scopes")
        }
    }
}
