import HashTreeCollections
import Logging

/// Silent token acquisition: a cached access token when one is valid, else a refresh token
/// redeemed at the authority (own first, then the family's), one refresh at a time per
/// account and family across processes.
extension TokenCache {
    /// The default network timeout of a token request.
    public static let defaultRequestTimeout = Duration.seconds(30)

    /// An access token for `scopes` without user interaction.
    ///
    /// 1. A valid cached token (not within 300 s of expiry, `refresh_on` not passed) is
    ///    returned at once: no network, no waiting, no executor hop (the function runs on the
    ///    caller's executor).
    /// 2. Otherwise the refresh tokens the client may use are redeemed in order (its own, then
    ///    its FOCI family's) at `authority`'s token endpoint, the answer is stored through the
    ///    ingest path (a rotated refresh token replaces the one redeemed), and the new token is
    ///    returned. Only one refresh per account and family runs at a time, across processes;
    ///    callers that waited for another's refresh get its token without a request.
    /// 3. When `refresh_on` has passed but the token is still valid and the refresh fails for a
    ///    network or server reason, the cached token is returned.
    /// 4. With a legacy account (``Account/isLegacy``, migrated by ``CacheGroup/importADAL(_:)``)
    ///    the first redemption of its ADAL refresh token stores the answer under the real home
    ///    account id from `client_info` and removes the client's legacy entries of the user: the
    ///    result's ``AuthenticationResult/account`` is the unified account, and later calls with
    ///    the legacy `Account` value go on as the unified one.
    ///
    /// ```swift
    /// do {
    ///     let result = try await cache.acquireTokenSilently(scopes: ["User.Read"], account: account)
    ///     send(authorization: "\(result.tokenType) \(result.accessToken)")
    /// } catch let error as TokenCacheError where error.code == .interactionRequired {
    ///     // Sign in interactively, then store the answer with store(_:for:signIn:).
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - scopes: what the token is for (`openid`, `profile`, `offline_access` are added to
    ///     the request and ignored in matching).
    ///   - account: the user, from ``accounts()`` or ``account(username:)``.
    ///   - authority: where to redeem; by default the account's cloud and home tenant.
    ///   - forceRefresh: skip the cached access token and redeem a refresh token.
    ///   - endpoint: how to reach the token endpoint (by default Foundation's `URLSession`).
    ///   - timeout: the network timeout of one token request.
    /// - Throws: `TokenCacheError`: `.interactionRequired` (no usable refresh token; the app
    ///   signed out of the account, before the refresh or while it was in flight, when its answer
    ///   is not stored, so that a sign-out, a wipe or a clear is never undone; or the server
    ///   answered `invalid_grant` / `interaction_required`: `server` has its error, suberror and
    ///   correlation id);
    ///   `.serverDeclinedScopes` (a token was issued and cached for fewer scopes; see
    ///   ``TokenCacheError/declinedScopes``); `.network`, `.serverError`, `.malformedResponse`
    ///   (nothing stored); `.lockTimeout` (another process's refresh did not finish in time);
    ///   `.invalidArgument` (scopes that name no resource, as ``accessToken(for:account:authority:tokenType:)``
    ///   says).
    public nonisolated(nonsending) func acquireTokenSilently(
        scopes: Scopes,
        account: Account,
        authority: Authority? = nil,
        forceRefresh: Bool = false,
        endpoint: any TokenEndpointClient = HTTPTokenEndpointClient.shared,
        timeout: Duration = TokenCache.defaultRequestTimeout
    ) async throws -> AuthenticationResult {
        if account.isLegacy, let unified = try migratedAccount(replacing: account) {
            // The first silent call (maybe another process's) already replaced it.
            return try await acquireTokenSilently(
                scopes: scopes, account: unified, authority: authority, forceRefresh: forceRefresh, endpoint: endpoint,
                timeout: timeout)
        }
        let cached = try accessToken(for: scopes, account: account, authority: authority)
        if !forceRefresh, let cached, !cached.shouldRefresh {
            return AuthenticationResult(cached.token, account: account, isFromCache: true)
        }
        return try await refreshSilently(
            scopes: scopes, account: account, authority: authority ?? Self.homeAuthority(of: account), cached: cached,
            forceRefresh: forceRefresh, endpoint: endpoint, timeout: timeout)
    }

    /// The cached access token for `scopes` as a result, without any network call: `nil` when
    /// none is valid. Synchronous: the cheapest lookup for apps that manage refreshes themselves.
    public func cachedResult(scopes: Scopes, account: Account, authority: Authority? = nil) throws -> AuthenticationResult? {
        guard let cached = try accessToken(for: scopes, account: account, authority: authority) else { return nil }
        return AuthenticationResult(cached.token, account: account, isFromCache: true)
    }

    /// `https://<account's cloud>/<home tenant>`.
    static func homeAuthority(of account: Account) -> Authority {
        Authority(host: account.environment.host, tenant: account.homeAccountId.tenantId ?? account.realm)
    }

    private nonisolated(nonsending) func refreshSilently(
        scopes: Scopes, account: Account, authority: Authority, cached: CachedAccessToken?, forceRefresh: Bool,
        endpoint: any TokenEndpointClient, timeout: Duration
    ) async throws -> AuthenticationResult {
        let homeAccount = account.homeAccountId.normalised
        // The user's partition holds the sign-in state and the refresh tokens read from here on:
        // in a group that keeps part of itself in memory it may have gone since the lookup.
        let index = try group.index(keeping: .user(account.homeAccountId))
        if index.clientStates[client]?.signedOut.contains(homeAccount) ?? false {
            throw TokenCacheError(
                .interactionRequired, "this app signed out of the account; sign in interactively to use it again")
        }
        // One refresh per account and refresh token family: clients of one family share (and
        // rotate) one refresh token, so they must queue behind each other.
        let family = index.family(of: client, environment: authority.environment)
        let lockKey = homeAccount + "\n" + (family.map { "family:" + $0 } ?? "client:" + client)
        let seen = cached?.token.secret
        // A still-valid token past refresh_on is renewed by one caller; the others serve the
        // cached token at once instead of queueing behind a refresh that may be slow.
        let stillValid = !forceRefresh ? cached : nil

        do {
            if let result = try await refreshHoldingLock(
                lockKey: lockKey, lockWait: stillValid == nil ? timeout * 3 + .seconds(5) : .zero, seen: seen, scopes: scopes,
                account: account, authority: authority, forceRefresh: forceRefresh, endpoint: endpoint, timeout: timeout)
            {
                return result
            }
            // A legacy account migrated by the caller this one queued behind: go on as the
            // unified account (its token is in the cache, or its refresh token is redeemed).
            guard let unified = try migratedAccount(replacing: account) else {
                throw TokenCacheError(.interactionRequired, "the migrated account is gone from the cache; sign in interactively")
            }
            return try await acquireTokenSilently(
                scopes: scopes, account: unified, authority: authority, forceRefresh: false, endpoint: endpoint, timeout: timeout)
        } catch let error as TokenCacheError where error.code == .lockTimeout || group.keepsServing(through: error) {
            // Another caller's refresh holds the lock, or the database that keeps the lock does
            // not answer and the group serves what it holds: a token still valid is served.
            guard let stillValid else { throw error }
            return AuthenticationResult(stillValid.token, account: account, isFromCache: true)
        }
    }

    private nonisolated(nonsending) func refreshHoldingLock(
        lockKey: String, lockWait: Duration, seen: String?, scopes: Scopes, account: Account, authority: Authority,
        forceRefresh: Bool, endpoint: any TokenEndpointClient, timeout: Duration
    ) async throws -> AuthenticationResult? {
        try await RefreshLock.shared.withLock(
            group: group.refreshLockName, directory: group.store.groupDirectory, locks: group.store.groupLocks,
            key: lockKey, timeout: lockWait
        ) {
            // Another caller may have refreshed (or migrated a legacy account) while this one
            // waited: take its token. A caller in another process may have stored it a moment
            // ago, before this store's generation shows it: the check costs one system call, the
            // request it may save a round trip.
            _ = group.store.checkForChanges()
            if account.isLegacy, try migratedAccount(replacing: account) != nil { return nil }
            let now = group.clock()
            let fresh = lookUp(
                try group.index(keeping: .user(account.homeAccountId)), scopes: scopes, account: account,
                authority: authority, tokenType: "Bearer", now: now)
            if let fresh, fresh.token.secret != seen || (!forceRefresh && !fresh.shouldRefresh) {
                return AuthenticationResult(fresh.token, account: account, isFromCache: true)
            }
            do {
                return try await redeem(
                    scopes: scopes, account: account, authority: authority, endpoint: endpoint, timeout: timeout)
            } catch let error as TokenCacheError {
                // refresh_on passed, the token is still valid, the authority is unreachable or
                // failing: MSAL keeps serving the cached token.
                if !forceRefresh, let fresh,
                    error.code == .network || error.code == .serverError || error.code == .malformedResponse
                {
                    return AuthenticationResult(fresh.token, account: account, isFromCache: true)
                }
                throw error
            }
        }
    }

    /// The unified account that replaced a legacy (ADAL-migrated) one for this client: the
    /// client has no legacy tokens of it left and sees a full account with its user name in
    /// its cloud. `nil` while the legacy account is still in use.
    func migratedAccount(replacing legacy: Account) throws -> Account? {
        let index = try group.index()
        guard index.credentials(account: legacy.homeAccountId.normalised, client: client).isEmpty else { return nil }
        return index.accounts(username: legacy.username).first {
            !$0.isLegacy && $0.environment.isAlias(of: legacy.environment)
                && index.isVisible($0.homeAccountId.normalised, to: client)
        }
    }

    /// Redeems the client's refresh tokens in order until one works; stores the answer.
    private nonisolated(nonsending) func redeem(
        scopes: Scopes, account: Account, authority: Authority, endpoint: any TokenEndpointClient, timeout: Duration
    ) async throws -> AuthenticationResult {
        let homeAccount = account.homeAccountId.normalised
        var tried = Set<EntryID>()
        var refusal: TokenCacheError?
        while true {
            let candidates = try group.index(keeping: .user(account.homeAccountId)).refreshTokenCandidates(
                account: homeAccount, environment: authority.environment, client: client)
            guard let candidate = candidates.first(where: { !tried.contains($0.entry.id) }),
                case .refreshToken(let refreshToken) = candidate.entry.entry
            else { break }
            tried.insert(candidate.entry.id)

            // Who and which token stay out of the log: the client, the kind of token and the cloud
            // are what an operator needs to follow a refresh.
            let metadata: Logger.Metadata = [
                "client": .string(clientId), "refreshToken": .string(candidate.isFamily ? "family" : "own"),
                "environment": .string("\(authority.environment)"),
            ]
            group.logger.info("redeeming a refresh token", metadata: metadata)
            let response: TokenResponse
            do {
                response = try await endpoint.redeem(
                    refreshToken: refreshToken.secret, clientId: clientId, scopes: scopes, endpoint: authority.tokenEndpoint,
                    timeout: timeout)
                group.logger.info("the refresh succeeded", metadata: metadata)
            } catch let error as TokenCacheError where error.code == .interactionRequired {
                group.logger.notice(
                    "the authority refused the refresh token: \(error.server?.error ?? "\(error.code)")\(error.server?.suberror.map { " (\($0))" } ?? "")",
                    metadata: metadata)
                if candidate.isFamily, error.server?.suberror == "client_mismatch" {
                    // The client is not in the family after all: remember it (family_id "")
                    // so it never offers a family token again, and fall back to its own.
                    try recordNotInFamily(environment: authority.environment)
                }
                refusal = error
                continue
            } catch let error as TokenCacheError {
                group.logger.warning("the refresh failed: \(error.code)", metadata: metadata)
                throw error
            } catch {
                group.logger.warning("the refresh failed: the token endpoint client threw \(type(of: error))", metadata: metadata)
                throw TokenCacheError(.network, "the token endpoint client failed (\(type(of: error)))")
            }
            return try store(response, redeemed: candidate.entry.id, scopes: scopes, account: account, authority: authority)
        }
        throw refusal
            ?? TokenCacheError(
                .interactionRequired, "this app has no refresh token it may use for the account; sign in interactively")
    }

    /// Stores a refresh answer and returns its token; throws `.serverDeclinedScopes` (after
    /// storing) when the server granted fewer scopes than asked for.
    private func store(
        _ answer: TokenResponse, redeemed: EntryID, scopes: Scopes, account: Account, authority: Authority
    ) throws -> AuthenticationResult {
        var response = answer
        if account.isLegacy {
            return try storeMigrating(answer, redeemed: redeemed, scopes: scopes, account: account, authority: authority)
        }
        if let info = response.clientInfo, let uid = info.string("uid"), let utid = info.string("utid"),
            HomeAccountId(uid: uid, utid: utid) != account.homeAccountId
        {
            // A refresh token answered for someone else: filing it would hand one user's
            // token to another user's requests (MSAL's "mismatched account" check).
            throw TokenCacheError(
                .serverError,
                "the authority answered for another account than the refresh token's; nothing was stored, sign in interactively"
            )
        }
        if response.clientInfo == nil, let tenant = account.homeAccountId.tenantId {
            // Without client_info the entries would be filed as app-only tokens: the request
            // was for this account, so file them under it (as MSAL does).
            var fields = response.fields
            var info: [UInt8] = []
            JSONWriter.write(
                .object(["uid": .string(account.homeAccountId.objectId), "utid": .string(tenant)]), style: .compact, into: &info)
            fields["client_info"] = .string(Base64URL.encode(info))
            response = try TokenResponse(fields: fields)
        }
        let request = TokenRequest(clientId: clientId, authority: authority, scopes: scopes, grantType: "refresh_token")
        let ingest = try Ingest(response: response, request: request, now: group.clock())
        let stored = try group.write { transaction in
            try checkStillSignedIn(account.homeAccountId.normalised, redeemed: redeemed, in: transaction.index)
            return ingest.apply(to: &transaction, redeemed: redeemed, signIn: false)
        }
        let owner = (try? group.index().primaryAccount(account.homeAccountId.normalised)) ?? account
        return try checkGranted(
            response, scopes: scopes, result: AuthenticationResult(stored, account: owner, isFromCache: false))
    }

    /// Stores the answer to a legacy (ADAL-migrated) refresh token: the full account from the
    /// answer's `client_info` and id token replaces the legacy one. In the same transaction the
    /// client's legacy entries of that user go (and the legacy account entry, once no client
    /// has legacy tokens for it), so `account(username:)` returns the unified account next.
    private func storeMigrating(
        _ response: TokenResponse, redeemed: EntryID, scopes: Scopes, account: Account, authority: Authority
    ) throws -> AuthenticationResult {
        guard let info = response.clientInfo, let uid = info.string("uid"), let utid = info.string("utid") else {
            // Without client_info the user's home account id stays unknown and the answer could
            // only be filed as an app token: keep the legacy entries for the next attempt.
            throw TokenCacheError(
                .malformedResponse,
                "the authority's answer to a migrated ADAL refresh token has no client_info; nothing was stored")
        }
        let homeAccount = HomeAccountId(uid: uid, utid: utid).normalised
        let legacy = account.homeAccountId.normalised
        let request = TokenRequest(clientId: clientId, authority: authority, scopes: scopes, grantType: "refresh_token")
        let ingest = try Ingest(response: response, request: request, now: group.clock())
        let stored = try group.write { transaction in
            try checkStillSignedIn(legacy, redeemed: redeemed, in: transaction.index)
            // Not passed as `redeemed`: a rotated token would keep the legacy token's fields,
            // and with them the synthetic home account id.
            let token = ingest.apply(to: &transaction, signIn: false)
            transaction.delete(redeemed)
            for entry in transaction.index.credentials(account: legacy, client: client) { transaction.delete(entry.id) }
            transaction.updateClientState(client) { $0.forget(legacy) }
            let remaining = transaction.index.entries(account: legacy)
            if remaining.allSatisfy({ $0.id.kind == .account }) {
                for entry in remaining { transaction.delete(entry.id) }
            }
            return token
        }
        let owner = try group.index().primaryAccount(homeAccount) ?? account
        return try checkGranted(
            response, scopes: scopes, result: AuthenticationResult(stored, account: owner, isFromCache: false))
    }

    /// Refuses to store the answer to a refresh when, while it was in flight, this client signed
    /// out of the account or the refresh token it redeemed left the group (a wipe, a sign-out of
    /// every client, `cachetool clear`): storing it would bring the account back.
    private func checkStillSignedIn(_ homeAccount: String, redeemed: EntryID, in index: Index) throws {
        let signedOut = index.clientStates[client]?.signedOut.contains(homeAccount) ?? false
        guard !signedOut, index[redeemed] != nil else {
            throw TokenCacheError(
                .interactionRequired,
                "the account was signed out while its token was being refreshed; nothing was stored, sign in interactively")
        }
    }

    /// `result`, or `.serverDeclinedScopes` carrying it when the server granted fewer scopes
    /// than asked for (the token is already cached).
    private func checkGranted(_ response: TokenResponse, scopes: Scopes, result: AuthenticationResult) throws
        -> AuthenticationResult
    {
        if let granted = response.grantedScopes, !scopes.isSubset(of: granted) {
            let declined = scopes.subtracting(granted)
            var error = TokenCacheError(
                .serverDeclinedScopes,
                "the authority issued a token but declined \(declined.values.count) of the requested scopes (the token was cached); ask the user to consent, or use the token for what was granted"
            )
            error.declinedScopes = DeclinedScopes(result: result, granted: granted, declined: declined)
            throw error
        }
        return result
    }
}
