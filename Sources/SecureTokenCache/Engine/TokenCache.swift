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
    /// See ``Answers``.
    private let answers = Mutex(Answers())
    /// See ``AppAnswers``.
    let appAnswers = Mutex(AppAnswers())

    /// A cache for `clientId` over `group`. Throws `.invalidArgument` for an empty client id, or
    /// one with a line break (a client id is a GUID or a URI; the group's records of a client's
    /// sign-in state are named by the client id and a line break).
    public init(clientId: String, group: CacheGroup) throws {
        guard !clientId.isEmpty else { throw TokenCacheError(.invalidArgument, "a TokenCache needs a non-empty client id") }
        guard !clientId.contains(where: \.isNewline) else {
            throw TokenCacheError(.invalidArgument, "a client id has no line break: pass the application (client) id")
        }
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
    ///
    /// - Throws: ``TokenCacheError``: `.invalidArgument` for scopes that name no resource (only
    ///   `openid`, `profile` and `offline_access`, which every token holds, so that any token
    ///   would do; msal-python refuses them too), and the store's errors when catching up with
    ///   other processes' writes.
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
        // Read before the lookup, and kept with its answer: a change that does not move the
        // generation while the lookup runs leaves the answer remembered at the count before it.
        let localChanges = group.localChanges.load(ordering: .relaxed)
        // The bound's use clock is read here, not inside the lock: passing the bound in would
        // hold a reference to it (a retain and a release) across the answer's lookup.
        let tick = group.bound?.nextTick()
        let remembered = answers.withLock {
            $0.answer(at: (generation, localChanges), scopes, account, authority, tokenType, noting: tick)
        }
        if let (token, noted) = remembered, !token.isExpired(at: now) {
            if !noted { noteUse(of: token) }
            return CachedAccessToken(token: token, shouldRefresh: token.shouldRefresh(at: now))
        }
        // Checked past the remembered answers, which never hold such a question.
        guard !scopes.isEmptyForMatching else {
            throw TokenCacheError(
                .invalidArgument,
                "a token lookup needs the resource's scopes, such as User.Read; openid, profile and offline_access name none")
        }
        let answer = try group.find(in: .user(account.homeAccountId)) { snapshot in
            lookUp(snapshot.index, scopes: scopes, account: account, authority: authority, tokenType: tokenType, now: now)
                .map { (found: $0, generation: snapshot.cursor.generation) }
        }
        guard let (found, generation) = answer else { return nil }
        let hit = Answer(
            generation: generation, scopes: scopes, account: account, authority: authority?.url, tokenType: tokenType,
            token: found.token, use: group.bound?.touch(.accessToken(found.token)))
        let state = (generation: generation, localChanges: localChanges)
        // Remembered under the lock; the answers it lets go are freed after it.
        _ = answers.withLock { $0.remember(hit, slot: Answers.slot(of: account), at: state) }
        return found
    }

    /// The best unexpired access token for `scopes` of type `tokenType` bound to the key `keyId`
    /// (a PoP or SSH-certificate token's `key_id`), or `nil`: a token bound to another key does
    /// not answer, as msal-python matches `key_id`, so that a certificate for a key the caller no
    /// longer holds is asked for again rather than used.
    ///
    /// - Throws: what ``accessToken(for:account:authority:tokenType:)`` throws.
    public func accessToken(
        for scopes: Scopes, account: Account, authority: Authority? = nil, tokenType: String, keyId: String
    ) throws -> CachedAccessToken? {
        // One token of a type per scopes and account (a new one replaces those whose scopes
        // intersect, whatever their key): the token found is the only candidate.
        guard let found = try accessToken(for: scopes, account: account, authority: authority, tokenType: tokenType),
            found.token.keyId == keyId
        else { return nil }
        return found
    }

    /// Tells a bounded group (``CacheConfiguration/memoryLimit``) that `token` answered a lookup,
    /// so that its partition is among the last evicted.
    func noteUse(of token: AccessToken) {
        group.bound?.touch(.accessToken(token))
    }

    /// An access token this cache answered with, and the question it answered.
    ///
    /// Apps ask for the same token over and over (before every API call). The answer depends
    /// only on the group's contents, which the generation identifies (every commit of any
    /// process bumps it), the question and the clock; and as time passes the set of unexpired
    /// tokens only shrinks, so the remembered token (the longest-lived match) stays the answer
    /// for as long as it is unexpired itself.
    ///
    /// A class, so that remembering an answer moves one reference instead of copying each part.
    final class Answer: Sendable {
        let generation: UInt64
        let scopes: Scopes
        /// What of the account and authority the lookup reads (an authority is its URL).
        let homeAccount: HashedString
        let environment: String
        let realm: String
        let authority: String?
        let tokenType: String
        let token: AccessToken
        /// The token's use in a bounded group, noted again when the token answers again.
        let use: CacheBound.Use?
        /// The account the question named: the same account asked about again (the group's own
        /// entry, which apps pass back) is known by its identity, without reading its parts.
        /// Held, so that no other account can take its place in memory while this is.
        let account: EntryStorage<Account.Parsed>
        /// ``account``'s identity, compared without a retain.
        let accountIdentity: ObjectIdentifier

        init(
            generation: UInt64, scopes: Scopes, account: Account, authority: String?, tokenType: String,
            token: AccessToken, use: CacheBound.Use?
        ) {
            self.generation = generation
            self.scopes = scopes
            self.homeAccount = account.homeAccountId.key
            self.environment = account.environment.group
            self.realm = account.realm
            self.authority = authority
            self.tokenType = tokenType
            self.token = token
            self.use = use
            self.account = account.storage
            self.accountIdentity = ObjectIdentifier(account.storage)
        }

        /// Whether this is the answer to that question on a group at `generation`. The account
        /// is named thrice: its storage's identity, its home account id's hash, and itself,
        /// whose parts are read only when the first two do not settle it.
        func answers(
            _ generation: UInt64, _ scopes: Scopes, _ identity: ObjectIdentifier, _ homeHash: Int, _ account: Account,
            _ authority: Authority?, _ tokenType: String
        ) -> Bool {
            self.generation == generation && self.tokenType == tokenType && self.authority == authority?.url
                && (accountIdentity == identity
                    || homeAccount.prehash == homeHash && homeAccount == account.homeAccountId.key
                        && environment == account.environment.group
                        && realm == account.realm)
                && self.scopes == scopes
        }

        /// Whether `other` answers the same question (at whatever generation).
        func isSameQuestion(as other: Answer) -> Bool {
            tokenType == other.tokenType && authority == other.authority && homeAccount == other.homeAccount
                && environment == other.environment && realm == other.realm && scopes == other.scopes
        }
    }

    /// The answers this cache remembers: the last one, and, once it has served more than one
    /// user, a few per user, since a server asks for the tokens of many users in turn, each
    /// over and over.
    ///
    /// The table has two slots per set of users (by home account id): a question is looked for
    /// in its user's two slots, and a new answer takes the slot of the same question or the
    /// older of the two. A user whose slots other users took is answered from the group.
    ///
    /// Every answer in the table was found at one state of the group: one generation, between
    /// the same two of its local changes (``CacheGroup/localChanges``: partitions dropped from
    /// memory, writes kept in memory). When the group moves on, the table is let
    /// go whole, by the next answer found in the group (an answer found earlier never answers
    /// again, and the table must not keep in memory the tokens the group let go).
    /// The state of the group a remembered answer was found at: its generation, and its count
    /// of local changes (``CacheGroup/localChanges``), which the generation does not show.
    typealias GroupState = (generation: UInt64, localChanges: UInt64)

    struct Answers: Sendable {
        /// The number of slot pairs: a power of two.
        static let sets = 4_096
        /// The last answer given.
        private var last: Answer?
        /// The count of the group's local changes ``last`` was found at.
        private var lastLocalChanges: UInt64 = 0
        /// Two slots per set, the newer first; empty until a second user is answered.
        private var slots: [Answer?] = []
        /// The slots filled since the table was last let go, to empty only those.
        private var filled: [Int] = []
        /// The group's generation and count of local changes that every answer in the table was
        /// found at.
        private var state: GroupState = (0, 0)

        /// The first of `account`'s two slots.
        static func slot(of account: Account) -> Int { slot(ofHash: account.homeAccountId.key.prehash) }

        /// The first of the two slots of the account whose home account id has this hash.
        private static func slot(ofHash homeHash: Int) -> Int { 2 * (homeHash & (sets - 1)) }

        /// The remembered token that answers the question on a group at `state` (its generation
        /// and its count of local changes), noted as used at `tick` of the bound's use clock;
        /// with whether it was noted (a token the bound has not counted yet is not).
        mutating func answer(
            at state: GroupState, _ scopes: Scopes, _ account: Account,
            _ authority: Authority?, _ tokenType: String, noting tick: UInt64?
        ) -> (AccessToken, noted: Bool)? {
            let generation = state.generation
            // Read in place, and the use noted here: copying an answer out would cost a retain
            // and a release each.
            let identity = ObjectIdentifier(account.storage)
            let homeHash = account.homeAccountId.key.prehash
            if lastLocalChanges == state.localChanges,
                last?.answers(generation, scopes, identity, homeHash, account, authority, tokenType) == true
            {
                return (last.unsafelyUnwrapped.token, noted: Self.note(last.unsafelyUnwrapped.use, at: tick))
            }
            guard !filled.isEmpty, self.state == state else { return nil }
            let first = Self.slot(ofHash: homeHash)
            // Each candidate is read as an unmanaged reference and borrowed for the comparison:
            // read as an element, it would be a retained copy, a retain and a release on an
            // object no other lookup touched lately. The table holds it throughout.
            let found = slots.withUnsafeBytes { slots -> Int? in
                for slot in first...first + 1 {
                    let offset = slot * MemoryLayout<Answer?>.stride
                    guard let candidate = slots.load(fromByteOffset: offset, as: Unmanaged<Answer>?.self) else { continue }
                    let answers = candidate._withUnsafeGuaranteedRef {
                        $0.answers(generation, scopes, identity, homeHash, account, authority, tokenType)
                    }
                    if answers { return slot }
                }
                return nil
            }
            guard let found else { return nil }
            if found != first { slots.swapAt(first, found) }
            return (slots[first].unsafelyUnwrapped.token, noted: Self.note(slots[first].unsafelyUnwrapped.use, at: tick))
        }

        /// The answers remembering one lets go.
        struct LetGo {
            var last: Answer?
            var replaced: Answer?
            var table: [Answer?] = []
        }

        /// Remembers `hit`, found at `state` for a user whose slots start at `slot`; returns
        /// the answers it lets go, for the caller to free outside the lock.
        mutating func remember(
            _ hit: Answer, slot first: Int, at state: GroupState
        ) -> LetGo {
            var letGo = LetGo(last: last)
            last = hit
            lastLocalChanges = state.localChanges
            // One user's answers, an app's usual case, stay the last only.
            guard let previous = letGo.last, previous.homeAccount != hit.homeAccount || !slots.isEmpty else {
                return letGo
            }
            if self.state != state {
                guard state.generation >= self.state.generation else { return letGo }
                letGo.table.reserveCapacity(filled.count)
                for slot in filled { letGo.table.append(slots[slot].take()) }
                filled.removeAll(keepingCapacity: true)
                self.state = state
            }
            if slots.isEmpty { slots = Array(repeating: nil, count: 2 * Self.sets) }
            // The same question's older answer goes, in the first slot or the second; else the
            // second, the older, does.
            if let newer = slots[first], newer.isSameQuestion(as: hit) {
                letGo.replaced = slots[first]
                slots[first] = hit
                return letGo
            }
            if slots[first + 1] == nil { filled.append(first + 1) }
            if slots[first] == nil { filled.append(first) }
            letGo.replaced = slots[first + 1]
            slots[first + 1] = slots[first]
            slots[first] = hit
            return letGo
        }

        /// Notes that the token of `use` answered again, at `tick` of the bound's use clock
        /// (`nil`: the group has no bound); whether it was noted (a token the bound had not
        /// counted when it was found is not). A use no longer in the bound (its entry gone since)
        /// takes a tick that nothing reads.
        private static func note(_ use: CacheBound.Use?, at tick: UInt64?) -> Bool {
            // Compared and chained, not bound to names: a name would be a retained copy.
            guard let tick else { return true }
            guard use != nil else { return false }
            use?.tick.store(tick, ordering: .relaxed)
            return true
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
