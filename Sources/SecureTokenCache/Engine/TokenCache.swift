import HashTreeCollections
import Synchronization

/// One client's view of a cache group: its tokens, the accounts it sees, its sign-in state.
///
/// Every method is synchronous, thread-safe and `Sendable`; lookups run on an immutable
/// snapshot (no disk, no D-Bus, no waiting for writers) and cost work proportional to what
/// they return. Several `TokenCache`s (different client ids) may share one ``CacheGroup``.
///
/// ```swift
/// let group = try CacheGroup.open()
/// let cache = try TokenCache(clientId: "11111111-aaaa-4bbb-8ccc-000000000001", group: group)
/// for account in try cache.accounts() {
///     print(account.username)
/// }
/// ```
///
/// See <doc:GettingStarted>.
public final class TokenCache: Sendable {
    /// The client (application) id, as given.
    public let clientId: String
    /// The group the cache reads and writes.
    public let group: CacheGroup
    /// The client id, lower-cased, as the index files it.
    let client: String
    /// ``client`` with its hash, computed once.
    let clientKey: HashedString
    /// See ``LastHit``.
    private let lastHit = Mutex<LastHit?>(nil)
    /// See ``AppAnswers``.
    let appAnswers = Mutex(AppAnswers())

    /// A cache for `clientId` over `group`. Throws `.invalidArgument` for an empty client id.
    public init(clientId: String, group: CacheGroup) throws {
        guard !clientId.isEmpty else { throw TokenCacheError(.invalidArgument, "a TokenCache needs a non-empty client id") }
        self.clientId = clientId
        self.group = group
        self.client = clientId.lowercased()
        self.clientKey = HashedString(client)
    }

    /// A cached access token, and whether it should be refreshed (`refresh_on` has passed).
    public struct CachedAccessToken: Sendable, Hashable {
        /// The token.
        public let token: AccessToken
        /// Whether `refresh_on` has passed: still valid, but the app should renew it.
        public let shouldRefresh: Bool
    }

    // MARK: - Lookups

    /// The bucket a lookup of `account` at `authority` reads: a `common`, `organizations` or
    /// `consumers` authority stands for the account's home tenant (rule 3).
    func bucket(_ index: Index, account: Account, authority: Authority?, tokenType: String, tenant override: String? = nil)
        -> AccessTokenBucket
    {
        let environment = authority?.environment ?? account.environment
        let realm: HashedString
        if let override {
            realm = HashedString(override)
        } else if let authority, !authority.isMultiTenant {
            realm = HashedString(
                index.tenantAliases.isEmpty ? authority.tenant : index.tenantAliases[authority.tenant] ?? authority.tenant)
        } else {
            realm = account.homeAccountId.tenantKey ?? HashedString(account.realm.lowercased())
        }
        return AccessTokenBucket(
            account: account.homeAccountId.key, environment: environment.groupKey, realm: realm, client: clientKey,
            tokenType: tokenType == "Bearer" ? .bearer : HashedString(tokenType.lowercased()), extCacheKey: .empty
        )
    }

    /// The best unexpired access token for `scopes`, or `nil`.
    ///
    /// ```swift
    /// if let cached = try cache.accessToken(for: ["User.Read"], account: account) {
    ///     use(cached.token.secret)
    /// }
    /// ```
    ///
    /// A token within 300 s of expiry counts as expired. Scopes match case-insensitively,
    /// ignoring `openid`, `profile` and `offline_access`. A multi-tenant `authority` (or none)
    /// means the account's home tenant; a token stored under the literal `common` realm (as
    /// msal-python writes) is found too.
    public func accessToken(
        for scopes: Scopes,
        account: Account,
        authority: Authority? = nil,
        tokenType: String = "Bearer"
    ) throws -> CachedAccessToken? {
        // The remembered answer is checked against the group's generation before any snapshot
        // is taken: a group at the same generation holds what it held when the answer was found.
        let generation = group.generation
        let now = group.clock()
        let remembered = lastHit.withLock { hit -> AccessToken? in
            guard hit?.answers(generation, scopes, account, authority, tokenType) == true else { return nil }
            return hit?.token
        }
        if let remembered, !remembered.isExpired(at: now) {
            noteUse(of: remembered)
            return CachedAccessToken(token: remembered, shouldRefresh: remembered.shouldRefresh(at: now))
        }
        let answer = try group.find(in: .user(account.homeAccountId)) { snapshot in
            lookUp(snapshot.index, scopes: scopes, account: account, authority: authority, tokenType: tokenType, now: now)
                .map { (found: $0, generation: snapshot.cursor.generation) }
        }
        guard let (found, generation) = answer else { return nil }
        noteUse(of: found.token)
        let hit = LastHit(
            generation: generation, scopes: scopes, homeAccount: account.homeAccountId.normalised,
            environment: account.environment.group, realm: account.realm, authority: authority?.url,
            tokenType: tokenType, token: found.token)
        // Swapped in under the lock; the answer it replaces is freed after it.
        var replaced: LastHit? = hit
        lastHit.withLock { swap(&$0, &replaced) }
        return found
    }

    /// Tells a bounded group (``CacheConfiguration/memoryLimit``) that `token` answered a lookup,
    /// so that its partition is among the last evicted.
    func noteUse(of token: AccessToken) {
        group.bound?.touch(.accessToken(token))
    }

    /// The last access token this cache answered with, and the question it answered.
    ///
    /// Apps ask for the same token over and over (before every API call). The answer depends
    /// only on the group's contents, which the generation identifies (every commit of any
    /// process bumps it), the question and the clock; and as time passes the set of unexpired
    /// tokens only shrinks, so the remembered token (the longest-lived match) stays the answer
    /// for as long as it is unexpired itself.
    ///
    /// A class, so that remembering a new answer, on every lookup that is not the last one
    /// again, moves one reference instead of copying each part.
    final class LastHit: Sendable {
        let generation: UInt64
        let scopes: Scopes
        /// What of the account and authority the lookup reads (an authority is its URL).
        let homeAccount: String
        let environment: String
        let realm: String
        let authority: String?
        let tokenType: String
        let token: AccessToken

        init(
            generation: UInt64, scopes: Scopes, homeAccount: String, environment: String, realm: String, authority: String?,
            tokenType: String, token: AccessToken
        ) {
            self.generation = generation
            self.scopes = scopes
            self.homeAccount = homeAccount
            self.environment = environment
            self.realm = realm
            self.authority = authority
            self.tokenType = tokenType
            self.token = token
        }

        /// Whether this is the answer to that question on a group at `generation`.
        func answers(_ generation: UInt64, _ scopes: Scopes, _ account: Account, _ authority: Authority?, _ tokenType: String)
            -> Bool
        {
            self.generation == generation && self.tokenType == tokenType && self.authority == authority?.url
                && homeAccount == account.homeAccountId.normalised && environment == account.environment.group
                && realm == account.realm && self.scopes == scopes
        }
    }

    func lookUp(_ index: Index, scopes: Scopes, account: Account, authority: Authority?, tokenType: String, now: Int64)
        -> CachedAccessToken?
    {
        var found = index.accessToken(
            in: bucket(index, account: account, authority: authority, tokenType: tokenType), scopes: scopes, now: now)
        if found == nil, let authority, authority.isMultiTenant {
            found = index.accessToken(
                in: bucket(index, account: account, authority: authority, tokenType: tokenType, tenant: authority.tenant),
                scopes: scopes, now: now)
        }
        return found.map { CachedAccessToken(token: $0, shouldRefresh: $0.shouldRefresh(at: now)) }
    }

    /// The accounts this client sees: those it can use a refresh token for (its own or its
    /// family's) or signed into, minus those it signed out of. One entry per user (the home
    /// tenant's account entry).
    public func accounts() throws -> [Account] {
        try group.find { snapshot in
            let index = snapshot.index
            let accounts = index.visibleAccounts(client: client).compactMap { index.primaryAccount($0) }
            return accounts.isEmpty ? nil : accounts
        } ?? []
    }

    /// The account with this home account id (case-insensitive), if the group has it. A group in
    /// a database that keeps only part of itself in memory loads the user's partition for it.
    public func account(identifier: String) throws -> Account? {
        let homeAccount = identifier.lowercased()
        return try group.find(in: .user(HomeAccountId(identifier))) { $0.index.primaryAccount(homeAccount) }
    }

    /// The account with this username (case-insensitive), preferring one this client sees.
    public func account(username: String) throws -> Account? {
        try group.find { snapshot in
            let matches = snapshot.index.accounts(username: username)
            return matches.first { snapshot.index.isVisible($0.homeAccountId.normalised, to: client) } ?? matches.first
        }
    }

    /// The account this client last signed in with, and the one before it.
    public func currentAccount() throws -> (current: Account?, previous: Account?) {
        let index = try group.index()
        let state = index.clientStates[client]
        return (state?.current.flatMap { index.primaryAccount($0) }, state?.previous.flatMap { index.primaryAccount($0) })
    }

    /// Whether this client signed out of `account` (and has not signed in again).
    public func isSignedOut(_ account: Account) throws -> Bool {
        try group.index().clientStates[client]?.signedOut.contains(account.homeAccountId.normalised) ?? false
    }

    /// The refresh tokens this client may redeem for `account`, in the order to try them:
    /// its own, then its family's (`family_id: ""` in its app metadata means no family).
    public func refreshTokens(for account: Account, authority: Authority? = nil) throws -> [RefreshToken] {
        let environment = authority?.environment ?? account.environment
        let tokens = try group.find(in: .user(account.homeAccountId)) { snapshot -> [RefreshToken]? in
            let found = snapshot.index.refreshTokenCandidates(
                account: account.homeAccountId.normalised, environment: environment, client: client
            )
            .compactMap { if case .refreshToken(let token) = $0.entry.entry { token } else { nil } }
            return found.isEmpty ? nil : found
        }
        return tokens ?? []
    }

    // MARK: - Writes

    /// Stores a token response for a request made by this client, in one transaction.
    ///
    /// Only the entries the response changes are written: the account a refresh names again
    /// is left as it is, and a response already stored commits nothing (no generation bump for
    /// other processes to catch up on, no keyring write). A client-credentials response (grant
    /// type ``clientCredentialsGrant``) is checked and stored as ``storeAppToken(_:for:)`` does.
    ///
    /// ```swift
    /// let request = TokenRequest(
    ///     clientId: cache.clientId, authority: authority, scopes: scopes, grantType: "authorization_code")
    /// try cache.store(try TokenResponse(json: answer), for: request)
    /// ```
    ///
    /// - Parameters:
    ///   - response: the token endpoint's answer, validated.
    ///   - request: what this client asked the authority for; its client id must be this
    ///     cache's.
    ///   - signIn: whether the response ends an interactive sign-in: the account becomes signed
    ///     in and current for this client.
    /// - Returns: the access token as stored.
    /// - Throws: ``TokenCacheError``: `.invalidArgument` when the request is another client's
    ///   (nothing is stored), what ``storeAppToken(_:for:)`` throws for a client-credentials
    ///   response, and the store's errors (`.lockTimeout`, `.diskFull`, ...).
    @discardableResult
    public func store(_ response: TokenResponse, for request: TokenRequest, signIn: Bool = true) throws -> AccessToken {
        guard request.clientId.asciiLowercased == client else {
            throw TokenCacheError(.invalidArgument, "the request is for another client id than this TokenCache's")
        }
        if request.grantType == Self.clientCredentialsGrant { return try storeChecked(response, forApp: request) }
        let ingest = try Ingest(response: response, request: request, now: group.clock())
        return try group.write { transaction in ingest.apply(to: &transaction, signIn: signIn) }
    }

    /// Signs this client out of `account`: removes the client's own access, id and refresh
    /// tokens for it (a family refresh token stays: the family's other apps keep their single
    /// sign-on) and hides the account from this client until it signs in again.
    public func signOut(_ account: Account) throws {
        let homeAccount = account.homeAccountId.normalised
        // In a group that keeps only part of itself in memory, the user's tokens there go too.
        try group.keep(.user(account.homeAccountId))
        try group.write { transaction in
            for stored in transaction.index.credentials(account: homeAccount, client: client) {
                if case .refreshToken(let token) = stored.entry, token.familyId != nil { continue }
                transaction.delete(stored.id)
            }
            transaction.updateClientState(client) { $0.signOut(homeAccount) }
        }
    }

    /// Records that this client is not in any FOCI family (`family_id: ""`), as MSAL does after
    /// a `client_mismatch` answer to a family refresh token.
    public func recordNotInFamily(environment: Environment) throws {
        try group.write { transaction in
            if let existing = transaction.index.appMetadata(client: client, environment: environment),
                case .appMetadata(let old) = existing.entry
            {
                guard old.familyId != "" else { return }
                var fields = old.fields
                fields["family_id"] = .string("")
                transaction.replace(existing.id, with: .appMetadata(AppMetadata(fields: fields)))
            } else {
                transaction.put(
                    .appMetadata(
                        AppMetadata(fields: [
                            "client_id": .string(clientId), "environment": .string(environment.host), "family_id": .string(""),
                        ])))
            }
        }
    }
}
