import HashTreeCollections
import Synchronization

/// App-only access tokens: what a daemon or a web API gets with its own credentials (the OAuth
/// client-credentials grant), one set per tenant and resource, with no user and no account.
///
/// They are filed like a user's tokens, under an empty account: `home_account_id` JSON `null`
/// (msal-python), `""` (msal-node) and a missing member (.NET, Go, Java) all mean an app token.
extension TokenCache {
    /// The grant type of an app-only token request.
    public static let clientCredentialsGrant = "client_credentials"

    /// The cached app-only access token for `scopes` in `authority`'s tenant, or `nil`.
    ///
    /// ```swift
    /// let authority = try Authority("https://login.microsoftonline.com/\(tenantId)")
    /// let scopes: Scopes = ["https://graph.microsoft.com/.default"]
    /// if let cached = try cache.appToken(for: scopes, authority: authority), !cached.shouldRefresh {
    ///     send(authorization: "Bearer \(cached.token.secret)")
    /// } else {
    ///     let answer = try await redeemClientCredentials(scopes: scopes, authority: authority)
    ///     let request = TokenRequest(
    ///         clientId: cache.clientId, authority: authority, scopes: scopes,
    ///         grantType: TokenCache.clientCredentialsGrant)
    ///     let stored = try cache.storeAppToken(try TokenResponse(json: answer), for: request)
    ///     send(authorization: "Bearer \(stored.secret)")
    /// }
    /// ```
    ///
    /// ``ConfidentialClient/acquireAppToken(for:authority:credential:cacheKeyComponents:)`` does all of this in one
    /// call, with one token request however many callers miss together.
    ///
    /// Finds the app tokens every MSAL SDK writes, under any alias of the authority's cloud
    /// (.NET and msal-node write `login.windows.net`). A token within 300 s of expiry counts as
    /// expired; ``CachedAccessToken/shouldRefresh`` says that `refresh_on` has passed (the token
    /// is still valid: serve it if renewing fails, as msal-python does). Among several matches
    /// the one that lives longest wins.
    ///
    /// Scopes match as for user tokens: case-insensitively, as a subset of the token's. msal-python
    /// compares case-sensitively, so an app that asks for `API://Resource/.default` finds here a
    /// token msal-python stored for `api://resource/.default`, where msal-python would not. A token
    /// stored with an extended cache key (msal-python's `fmi_path`) answers only a lookup with the
    /// same `cacheKeyComponents`. The
    /// token stored for exactly these scopes answers first, at the same cost however many
    /// resources the tenant has tokens for; a miss looks through the tenant's app tokens.
    ///
    /// - Parameters:
    ///   - scopes: the resource's scopes, usually one `<resource>/.default`.
    ///   - authority: the cloud and the tenant. The tenant must be a tenant id (a GUID) or a
    ///     domain name the group has already resolved to one; the multi-tenant aliases
    ///     (`common`, `organizations`, `consumers`) name no tenant an app token can be for.
    ///   - cacheKeyComponents: the extra parameters the token was requested with that set it
    ///     apart (``TokenRequest/cacheKeyComponents``, such as `["fmi_path": path]`): only a
    ///     token stored with the same ones answers; none by default.
    /// - Returns: the token, or `nil` when none is valid for 300 s more.
    /// - Throws: ``TokenCacheError``: `.invalidArgument` for empty scopes or a tenant that is
    ///   neither a tenant id nor a known domain; the store's errors when catching up with other
    ///   processes' writes.
    public func appToken(for scopes: Scopes, authority: Authority, cacheKeyComponents: [String: String] = [:]) throws
        -> CachedAccessToken?
    {
        // As for a user's token (``Answers``): an answer found at this state of the group (its
        // generation and its local changes, read before the lookup) stays the answer for as
        // long as it is unexpired.
        let state = (generation: group.generation, localChanges: group.localChanges.load(ordering: .relaxed))
        let extCacheKey = cacheKeyComponents.isEmpty ? nil : ExtendedCacheKey.of(cacheKeyComponents)
        if let answer = appAnswers.withLock({
            $0.answer(authority: authority.url, scopes: scopes, extCacheKey: extCacheKey, at: state)
        }) {
            let now = group.clock()
            if !answer.isExpired(at: now) {
                noteUse(of: answer)
                return CachedAccessToken(token: answer, shouldRefresh: answer.shouldRefresh(at: now))
            }
        }
        try Self.checkAppScopes(scopes)
        let now = group.clock()
        // The partition is named by the tenant as the group resolves it now; a catch-up that
        // teaches the group a domain's tenant files the token where the lookup then looks.
        let partition = CachePartition.app(
            clientId: client, tenantId: try Self.appRealm(of: authority, in: try group.index()), extCacheKey: extCacheKey)
        let answer = try group.find(in: partition) { snapshot -> (found: AccessToken, generation: UInt64)? in
            let realm = try Self.appRealm(of: authority, in: snapshot.index)
            // A tenant may hold a token for each of thousands of resources: the one stored for
            // exactly these scopes is found by its key, as msal-python finds it, not by a scan.
            let key =
                extCacheKey.map { "-\(authority.environment.host)-atext-\(client)-\(realm)-\(scopes.target)-\($0)" }
                ?? "-\(authority.environment.host)-accesstoken-\(client)-\(realm)-\(scopes.target)"
            return snapshot.index.accessToken(
                in: appBucket(environment: authority.environment, realm: realm, extCacheKey: extCacheKey),
                key: EntryID(kind: .accessToken, key: key.lowercased()), scopes: scopes, now: now
            ).map { ($0, snapshot.cursor.generation) }
        }
        guard let (found, generation) = answer else { return nil }
        noteUse(of: found)
        let question = AppQuestion(authority: authority.url, scopes: scopes, extCacheKey: extCacheKey)
        appAnswers.withLock { $0.remember(found, for: question, at: (generation, state.localChanges)) }
        return CachedAccessToken(token: found, shouldRefresh: found.shouldRefresh(at: now))
    }

    /// A question ``appToken(for:authority:cacheKeyComponents:)`` answered: the authority as
    /// given, the scopes and the extended cache key of the components.
    struct AppQuestion: Hashable, Sendable {
        let authority: String
        let scopes: Scopes
        let extCacheKey: String?

        /// Whether this is the question of these parts, compared where they are (a hit checks the
        /// last question without copying either side).
        func isAsked(authority: String, scopes: Scopes, extCacheKey: String?) -> Bool {
            self.authority == authority && self.scopes == scopes && self.extCacheKey == extCacheKey
        }
    }

    /// The app tokens this cache last answered with, all found at one generation of the group
    /// and between the same two of its local changes (``CacheGroup/localChanges``).
    ///
    /// A server asks for the same few resources' tokens before every call it makes; the answers
    /// of one generation hold until it moves (any commit of any process), and each stays the
    /// answer while it is unexpired (as time passes, matches only drop out). Bounded: a cache
    /// asked about more questions than ``limit`` starts again.
    struct AppAnswers: Sendable {
        static let limit = 256
        private var state: GroupState = (.max, 0)
        private var answers: [AppQuestion: AccessToken] = [:]
        /// The last question answered and its answer, checked first: comparing the caller's own
        /// strings again (the same storage) costs less than hashing them, and comparing them in
        /// place costs less than copying the question to compare (each copy retains its parts).
        private var last: (question: AppQuestion, token: AccessToken)?

        /// The remembered answer to the question of these parts, if it was found at `current`.
        mutating func answer(
            authority: String, scopes: Scopes, extCacheKey: String?, at current: GroupState
        ) -> AccessToken? {
            guard state == current else { return nil }
            if last?.question.isAsked(authority: authority, scopes: scopes, extCacheKey: extCacheKey) == true {
                return last?.token
            }
            let question = AppQuestion(authority: authority, scopes: scopes, extCacheKey: extCacheKey)
            guard let token = answers[question] else { return nil }
            last = (question, token)
            return token
        }

        /// Remembers `token` as the answer to `question` at `found`, forgetting answers of
        /// another state of the group.
        mutating func remember(
            _ token: AccessToken, for question: AppQuestion, at found: GroupState
        ) {
            if state != found || answers.count >= Self.limit {
                state = found
                answers.removeAll(keepingCapacity: true)
            }
            answers[question] = token
            last = (question, token)
        }
    }

    /// Stores a client-credentials response (an app-only token) in one transaction.
    ///
    /// The entry is what msal-python 1.39.0 writes for the same response: `home_account_id`
    /// `null`, `token_type`, `extended_expires_on`, `refresh_on` when the response has
    /// `refresh_in`, and the client's app metadata; an export of it is byte-identical to
    /// msal-python's `serialize()`. Tokens of the same tenant whose scopes intersect the new
    /// one's are replaced.
    ///
    /// - Parameters:
    ///   - response: the token endpoint's answer to the client-credentials request.
    ///   - request: the request: this cache's client id, grant type
    ///     ``clientCredentialsGrant``, and an authority whose tenant
    ///     ``appToken(for:authority:cacheKeyComponents:)`` accepts (a tenant id, or a domain the group knows; the
    ///     token is filed under the tenant id).
    /// - Returns: the access token as stored.
    /// - Throws: ``TokenCacheError``, and nothing is stored: `.invalidArgument` for another
    ///   client's request, another grant type, empty scopes or a tenant that is neither a tenant
    ///   id nor a known domain; `.malformedResponse` for a response without `expires_in` or with
    ///   a refresh token, an id token or `client_info` (those belong to a user); and the store's
    ///   errors (`.lockTimeout`, `.diskFull`, ...).
    @discardableResult
    public func storeAppToken(_ response: TokenResponse, for request: TokenRequest) throws -> AccessToken {
        try checkRequest(
            request, grant: Self.clientCredentialsGrant,
            "storeAppToken(_:for:) stores client-credentials responses (grant type \"client_credentials\"); "
                + "store a user's token with store(_:for:signIn:)")
        return try storeChecked(response, forApp: request)
    }

    /// Refuses a request of another client than this cache's, or of another grant type than
    /// `grant`, saying `refusal` for the latter.
    func checkRequest(_ request: TokenRequest, grant: String, _ refusal: @autoclosure () -> String) throws {
        guard request.clientId.lowercased() == client else {
            throw TokenCacheError(.invalidArgument, "the request is for another client id than this TokenCache's")
        }
        guard request.grantType == grant else { throw TokenCacheError(.invalidArgument, refusal()) }
    }

    /// ``storeAppToken(_:for:)`` for a request already known to be this client's and a
    /// client-credentials one (``store(_:for:signIn:)`` sends those here).
    func storeChecked(_ response: TokenResponse, forApp request: TokenRequest) throws -> AccessToken {
        try Self.checkAppScopes(request.scopes)
        guard response.expiresIn != nil else {
            throw TokenCacheError(
                .malformedResponse, "the client-credentials response has no expires_in; nothing was stored")
        }
        guard response.refreshToken == nil, response.idToken == nil, response.clientInfo == nil else {
            throw TokenCacheError(
                .malformedResponse,
                "the client-credentials response carries a refresh token, an id token or client_info, which belong to a user; "
                    + "nothing was stored")
        }
        let now = group.clock()
        return try group.write { transaction in
            let realm = try Self.appRealm(of: request.authority, in: transaction.index)
            var filed = request
            if realm != request.authority.tenant {
                // A known domain: file the token under its tenant id, where lookups through the
                // tenant id or the domain both find it.
                filed.authority = try Authority("\(request.authority.base)/\(realm)")
            }
            return try Ingest(response: response, request: filed, now: now).apply(to: &transaction, signIn: false)
        }
    }

    /// Where the app tokens of this client in one cloud and tenant are filed, with the extended
    /// cache key `extCacheKey` when given.
    func appBucket(environment: Environment, realm: String, extCacheKey: String? = nil) -> AccessTokenBucket {
        AccessTokenBucket(
            account: .empty, environment: environment.groupKey, realm: HashedString(realm), client: clientKey, tokenType: .bearer,
            extCacheKey: extCacheKey.map { HashedString($0.asciiLowercased) } ?? .empty)
    }

    /// Rejects a request that names no scope: every client-credentials request names its
    /// resource's, and an empty set would match any token of the tenant.
    static func checkAppScopes(_ scopes: Scopes) throws {
        guard !scopes.isEmptyForMatching else {
            throw TokenCacheError(
                .invalidArgument, "an app token needs the resource's scopes, such as https://graph.microsoft.com/.default")
        }
    }

    /// The tenant id app tokens of `authority` are filed under: its tenant when that is a tenant
    /// id, the tenant id a domain name stands for when the group knows it.
    static func appRealm(of authority: Authority, in index: Index) throws -> String {
        let tenant = authority.tenant
        if Authority.isTenantId(tenant) { return tenant }
        if let known = index.tenantAliases[tenant] { return known }
        if authority.isMultiTenant {
            throw TokenCacheError(
                .invalidArgument,
                "an app token is for one tenant, and \"\(tenant)\" names none: use the tenant id (a GUID) in the authority")
        }
        throw TokenCacheError(
            .invalidArgument,
            "the authority's tenant is neither a tenant id (a GUID) nor a domain this group knows: use the tenant id")
    }
}
