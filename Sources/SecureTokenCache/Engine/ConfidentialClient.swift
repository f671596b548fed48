import CoreMetrics
import Logging

/// A confidential client (a daemon, a web API) acquiring its tokens: app-only tokens with its
/// own credential, and on-behalf-of tokens for the users who call it.
///
/// ```swift
/// let client = ConfidentialClient(cache: cache, credentialKind: .secret)
/// let token = try await client.acquireAppToken(
///     for: ["https://graph.microsoft.com/.default"], authority: authority, credential: .secret(secret))
/// send(authorization: "Bearer \(token.token.secret)")
/// ```
///
/// A cached token is returned at once. Past its `refresh_on` it is still returned, and one
/// renewal starts in the background (if it fails, the token is served until it expires, as in
/// msal-python). A miss redeems the grant once however many callers miss together: concurrent
/// callers of this process wait for one token request and all get its token or its error, and
/// processes sharing the group take turns on a lock file, each looking in the cache again
/// before it asks the authority.
///
/// The credential is a parameter of each call and is never stored.
public struct ConfidentialClient: Sendable {
    /// The cache the tokens are looked up in and stored into.
    public let cache: TokenCache
    /// The kind of credential the app is registered with: a call presenting another kind is
    /// refused before anything is sent.
    public let credentialKind: ClientCredential.Kind
    /// Where grants are redeemed.
    public let endpoint: any TokenEndpointClient
    /// How long one token request may take.
    public let timeout: Duration
    /// The group's counters of app and on-behalf-of acquisitions, held here rather than reached
    /// through the cache and its group on each call: that walk retains and releases at every
    /// step, a visible part of what a cache hit costs.
    private let appCounters: CacheMetrics.Acquisitions
    private let onBehalfOfCounters: CacheMetrics.Acquisitions

    /// A confidential client for `cache`'s client id, registered with a credential of
    /// `credentialKind`, redeeming grants through `endpoint`.
    public init(
        cache: TokenCache, credentialKind: ClientCredential.Kind,
        endpoint: any TokenEndpointClient = HTTPTokenEndpointClient.shared,
        timeout: Duration = .seconds(30)
    ) {
        self.cache = cache
        self.credentialKind = credentialKind
        self.endpoint = endpoint
        self.timeout = timeout
        appCounters = cache.group.metrics.app
        onBehalfOfCounters = cache.group.metrics.onBehalfOf
    }

    /// An access token and where it came from.
    public struct Acquired: Sendable, Hashable, CustomStringConvertible {
        /// The access token. Never log its ``AccessToken/secret``.
        public let token: AccessToken
        /// Whether it came from the cache (`true`) or from the authority just now (`false`).
        public let isFromCache: Bool

        /// A summary for logs, without the token.
        public var description: String {
            "token for \(token.scopes) expiring at \(token.expiresOn) (\(isFromCache ? "from the cache" : "from the authority"))"
        }
    }

    /// An app-only token for `scopes` in `authority`'s tenant: the cached one, or one redeemed
    /// with the client-credentials grant.
    ///
    /// - Parameters:
    ///   - scopes: the resource's scopes, usually one `<resource>/.default`.
    ///   - authority: the cloud and the tenant (a tenant id, or a domain the group knows).
    ///   - credential: the app's credential, of ``credentialKind``.
    ///   - cacheKeyComponents: extra parameters to send with the request that set the token apart
    ///     in the cache (such as `["fmi_path": path]`; see ``TokenRequest/cacheKeyComponents``).
    /// - Throws: ``TokenCacheError``: `.invalidArgument` for a credential of another kind than
    ///   ``credentialKind`` and for what ``TokenCache/appToken(for:authority:cacheKeyComponents:)`` refuses; the
    ///   token endpoint's errors (`.serverError`, `.network`, `.malformedResponse`), delivered to
    ///   every caller that waited for the same request; `.lockTimeout` when another process
    ///   held the request for too long; the store's errors.
    public nonisolated(nonsending) func acquireAppToken(
        for scopes: Scopes, authority: Authority, credential: ClientCredential, cacheKeyComponents: [String: String] = [:]
    ) async throws -> Acquired {
        try check(credential)
        if let cached = try cache.appToken(for: scopes, authority: authority, cacheKeyComponents: cacheKeyComponents),
            !cached.shouldRefresh
        {
            appCounters.hits.increment()
            return Acquired(token: cached.token, isFromCache: true)
        }
        return try await requestAppToken(
            for: scopes, authority: authority, credential: credential, cacheKeyComponents: cacheKeyComponents)
    }

    /// ``acquireAppToken(for:authority:credential:cacheKeyComponents:)`` past a miss: a function
    /// of its own, so that a hit's async frame is small and holds none of what a request needs.
    private nonisolated(nonsending) func requestAppToken(
        for scopes: Scopes, authority: Authority, credential: ClientCredential, cacheKeyComponents: [String: String]
    ) async throws -> Acquired {
        let counters = appCounters
        let cache = cache
        let lookUp = { @Sendable in
            try cache.appToken(for: scopes, authority: authority, cacheKeyComponents: cacheKeyComponents)
        }
        let realm = try TokenCache.appRealm(of: authority, in: try cache.group.index())
        let request = TokenRequest(
            clientId: cache.clientId, authority: try Authority("\(authority.base)/\(realm)"), scopes: scopes,
            grantType: TokenCache.clientCredentialsGrant, cacheKeyComponents: cacheKeyComponents)
        let extCacheKey = request.extCacheKey ?? ""
        let key = ["app", authority.environment.groupKey.value, realm, scopes.flightKey, extCacheKey].joined(separator: "\n")
        return try await acquire(key: key, counters: counters, lookUp: lookUp) { [endpoint, timeout] in
            let response = try await endpoint.requestToken(
                grant: .clientCredentials(credential, parameters: cacheKeyComponents), clientId: cache.clientId, scopes: scopes,
                endpoint: request.authority.tokenEndpoint, timeout: timeout)
            return try cache.storeAppToken(response, for: request)
        }
    }

    /// An on-behalf-of token for `scopes`, for the user whose access token is `assertion`: the
    /// cached one redeemed from the same assertion, or one redeemed now.
    ///
    /// - Parameters:
    ///   - scopes: the downstream API's scopes.
    ///   - assertion: the access token the web API received from its caller.
    ///   - authority: the cloud and the tenant; a multi-tenant authority stands for the
    ///     assertion's tenant.
    ///   - credential: the app's credential, of ``credentialKind``.
    /// - Throws: as ``acquireAppToken(for:authority:credential:cacheKeyComponents:)``, and `.interactionRequired`
    ///   when the authority refuses the assertion (`invalid_grant`, `interaction_required`):
    ///   the caller must get a new token, and the web API should send it the challenge.
    public nonisolated(nonsending) func acquireOnBehalfOfToken(
        for scopes: Scopes, assertion: UserAssertion, authority: Authority, credential: ClientCredential
    ) async throws -> Acquired {
        try check(credential)
        if let cached = try cache.onBehalfOfToken(for: scopes, assertion: assertion, authority: authority), !cached.shouldRefresh
        {
            onBehalfOfCounters.hits.increment()
            return Acquired(token: cached.token, isFromCache: true)
        }
        return try await requestOnBehalfOfToken(for: scopes, assertion: assertion, authority: authority, credential: credential)
    }

    /// ``acquireOnBehalfOfToken(for:assertion:authority:credential:)`` past a miss, apart for the
    /// reason ``requestAppToken(for:authority:credential:cacheKeyComponents:)`` is.
    private nonisolated(nonsending) func requestOnBehalfOfToken(
        for scopes: Scopes, assertion: UserAssertion, authority: Authority, credential: ClientCredential
    ) async throws -> Acquired {
        let counters = onBehalfOfCounters
        let cache = cache
        let lookUp = { @Sendable in try cache.onBehalfOfToken(for: scopes, assertion: assertion, authority: authority) }
        let tenant = try TokenCache.onBehalfOfTenant(of: authority, assertion: assertion)
        let request = TokenRequest(
            clientId: cache.clientId, authority: try Authority("\(authority.base)/\(tenant)"), scopes: scopes,
            grantType: TokenCache.onBehalfOfGrant)
        let key = ["obo", assertion.hash, authority.environment.groupKey.value, tenant, scopes.flightKey].joined(separator: "\n")
        return try await acquire(key: key, counters: counters, lookUp: lookUp) { [endpoint, timeout] in
            let response = try await endpoint.requestToken(
                grant: .onBehalfOf(assertion, credential), clientId: cache.clientId, scopes: scopes,
                endpoint: request.authority.tokenEndpoint, timeout: timeout)
            return try cache.storeOnBehalfOfToken(response, for: request, assertion: assertion)
        }
    }

    /// A long-running on-behalf-of session (``startLongRunningSession(for:assertion:sessionKey:authority:credential:)``):
    /// its key, and the token its start acquired.
    public struct LongRunningSession: Sendable, Hashable {
        /// The key the session's tokens are filed under: keep it with the work, and pass it to
        /// ``ConfidentialClient/acquireLongRunningToken(for:sessionKey:authority:credential:)``.
        /// By default the assertion's hash, which does not reveal the assertion.
        public let key: String
        /// The token the start acquired.
        public let acquired: Acquired
    }

    /// Starts a long-running session for the caller whose access token is `assertion`: a token
    /// for `scopes` on the caller's behalf, kept with its refresh token under `sessionKey`, so
    /// that work outliving the caller's token (a report, a batch job) can renew it later with
    /// ``acquireLongRunningToken(for:sessionKey:authority:credential:)`` (MSAL.NET's
    /// `InitiateLongRunningProcessInWebApi`).
    ///
    /// A session already holding a valid token for `scopes` answers from the cache; otherwise the
    /// assertion is redeemed (once however many callers start the same session together).
    ///
    /// - Parameters:
    ///   - scopes: the downstream API's scopes.
    ///   - assertion: the access token the web API received from its caller.
    ///   - sessionKey: the session's key; by default the assertion's hash.
    ///   - authority: the cloud and the tenant (a multi-tenant authority stands for the
    ///     assertion's tenant).
    ///   - credential: the app's credential, of ``credentialKind``.
    /// - Throws: as ``acquireOnBehalfOfToken(for:assertion:authority:credential:)``, and
    ///   `.invalidArgument` for an empty session key.
    public nonisolated(nonsending) func startLongRunningSession(
        for scopes: Scopes, assertion: UserAssertion, sessionKey: String? = nil, authority: Authority,
        credential: ClientCredential
    ) async throws -> LongRunningSession {
        try check(credential)
        let sessionKey = sessionKey ?? assertion.hash
        let key = try TokenCache.sessionIndexKey(sessionKey)
        let counters = onBehalfOfCounters
        let tenant = try TokenCache.onBehalfOfTenant(of: authority, assertion: assertion)
        let cache = cache
        let lookUp = { @Sendable in try cache.onBehalfOfToken(for: scopes, key: key, tenant: tenant, authority: authority) }
        let request = TokenRequest(
            clientId: cache.clientId, authority: try Authority("\(authority.base)/\(tenant)"), scopes: scopes,
            grantType: TokenCache.onBehalfOfGrant)
        let flight = ["session", key.value, authority.environment.groupKey.value, tenant, scopes.flightKey].joined(
            separator: "\n")
        let acquired = try await acquire(key: flight, counters: counters, lookUp: lookUp) { [endpoint, timeout] in
            let response = try await endpoint.requestToken(
                grant: .onBehalfOf(assertion, credential), clientId: cache.clientId, scopes: scopes,
                endpoint: request.authority.tokenEndpoint, timeout: timeout)
            return try cache.storeLongRunningToken(response, for: request, sessionKey: sessionKey, assertion: assertion)
        }
        return LongRunningSession(key: sessionKey, acquired: acquired)
    }

    /// A token of the long-running session `sessionKey` for `scopes`: the cached one, or one the
    /// session's refresh token redeems now, without the caller's assertion (MSAL.NET's
    /// `AcquireTokenInLongRunningProcess`).
    ///
    /// - Parameters:
    ///   - scopes: the downstream API's scopes (those the session started with, or others its
    ///     refresh token can get).
    ///   - sessionKey: ``LongRunningSession/key``.
    ///   - authority: the cloud and the tenant the session's tokens are for (a tenant: a
    ///     multi-tenant alias cannot be resolved without the assertion).
    ///   - credential: the app's credential, of ``credentialKind``.
    /// - Throws: ``TokenCacheError``: `.interactionRequired` when the session has no refresh
    ///   token (it was never started here, or it was cleared) or the authority refuses it: the
    ///   work needs a new session from the caller; `.invalidArgument` for a credential of another
    ///   kind, empty scopes or key, or a multi-tenant authority; the token endpoint's and the
    ///   store's errors.
    public nonisolated(nonsending) func acquireLongRunningToken(
        for scopes: Scopes, sessionKey: String, authority: Authority, credential: ClientCredential
    ) async throws -> Acquired {
        try check(credential)
        let counters = onBehalfOfCounters
        if let cached = try cache.longRunningToken(for: scopes, sessionKey: sessionKey, authority: authority),
            !cached.shouldRefresh
        {
            counters.hits.increment()
            return Acquired(token: cached.token, isFromCache: true)
        }
        let cache = cache
        let lookUp = { @Sendable in try cache.longRunningToken(for: scopes, sessionKey: sessionKey, authority: authority) }
        let request = TokenRequest(
            clientId: cache.clientId, authority: authority, scopes: scopes, grantType: TokenCache.refreshTokenGrant)
        let key = try TokenCache.sessionIndexKey(sessionKey)
        let flight = ["session", key.value, authority.environment.groupKey.value, authority.tenant, scopes.flightKey]
            .joined(separator: "\n")
        return try await acquire(key: flight, counters: counters, lookUp: lookUp) { [endpoint, timeout] in
            guard let refreshToken = try cache.longRunningRefreshToken(sessionKey: sessionKey, authority: authority) else {
                throw TokenCacheError(
                    .interactionRequired,
                    "the long-running session has no refresh token in this group: start it again with the caller's token")
            }
            let response = try await endpoint.requestToken(
                grant: .sessionRefreshToken(refreshToken.secret, credential), clientId: cache.clientId, scopes: scopes,
                endpoint: request.authority.tokenEndpoint, timeout: timeout)
            return try cache.storeLongRunningToken(response, for: request, sessionKey: sessionKey)
        }
    }

    /// Requests for the same token in flight in this process, by group, client and token.
    private static let flights = SingleFlight<Acquired>()

    /// What the keys of this client's requests in ``flights`` start with: its group and client.
    private var flightKeyPrefix: String { "\(UInt(bitPattern: ObjectIdentifier(cache.group)))\n\(cache.client)\n" }

    /// How many acquisitions of this client's tokens are in a request in flight now, having
    /// started or joined it (``SingleFlight/callers(ofKeysWhere:)``).
    var callersInFlight: Int {
        let prefix = flightKeyPrefix
        return Self.flights.callers { $0.hasPrefix(prefix) }
    }

    /// The cached token, renewed in the background past `refresh_on`; or, on a miss, the token
    /// of the one request in flight for `key`. Counts what happened in `counters`.
    private nonisolated(nonsending) func acquire(
        key tokenKey: String, counters: CacheMetrics.Acquisitions,
        lookUp: @escaping @Sendable () throws -> TokenCache.CachedAccessToken?,
        redeem: @escaping @Sendable () async throws -> AccessToken
    ) async throws -> Acquired {
        let group = cache.group
        let flightKey = flightKeyPrefix + tokenKey
        let lockKey = "\(cache.client)\n\(tokenKey)"
        let lockWait = timeout * 3 + .seconds(5)
        let work: @Sendable () async throws -> Acquired = {
            try await RefreshLock.shared.withLock(
                group: group.refreshLockName, directory: group.store.groupDirectory, locks: group.store.groupLocks,
                key: lockKey, timeout: lockWait
            ) {
                // Another process may have stored the token while this one waited for the lock, a
                // moment ago, before this store's generation shows it (a renewal past refresh_on
                // finds the old token still there): the check costs one system call or round
                // trip, the request it may save one to the authority.
                _ = group.store.checkForChanges()
                if let fresh = try lookUp(), !fresh.shouldRefresh { return Acquired(token: fresh.token, isFromCache: true) }
                counters.tokenRequests.increment()
                return Acquired(token: try await redeem(), isFromCache: false)
            }
        }
        if let cached = try lookUp() {
            if cached.shouldRefresh {
                let logger = group.logger
                let renewal = Self.flights.start(flightKey, work)
                Task {
                    // The token is still valid: a failed renewal only means trying again on the
                    // next call past refresh_on.
                    if case .failure(let error) = await renewal.result {
                        logger.notice(
                            "renewing a token past its refresh_on failed: \((error as? TokenCacheError)?.code.name ?? "\(type(of: error))")"
                        )
                    }
                }
            }
            counters.hits.increment()
            return Acquired(token: cached.token, isFromCache: true)
        }
        counters.misses.increment()
        return try await Self.flights.run(flightKey, work)
    }

    private func check(_ credential: ClientCredential) throws {
        guard credential.kind == credentialKind else {
            throw TokenCacheError(
                .invalidArgument,
                "a client \(credential.kind == .secret ? "secret" : "certificate assertion") was passed, but this client is "
                    + "configured for a \(credentialKind == .secret ? "client secret" : "certificate"); nothing was sent")
        }
    }
}

extension Scopes {
    /// The scopes as one key: lower-cased and sorted, so callers asking for the same scopes in
    /// another order or case share one request.
    var flightKey: String { values.map { $0.lowercased() }.sorted().joined(separator: " ") }
}
