import Dispatch
import HashTreeCollections
import Synchronization

/// Where access tokens of one account, cloud, tenant, client and token type are filed.
///
/// Every part carries its hash, made once where the part is made (an entry read from the store,
/// a `HomeAccountId`, an `Environment`, a `TokenCache`), so hashing a bucket combines six
/// integers instead of hashing about 200 bytes of text.
struct AccessTokenBucket: Hashable, Sendable {
    var account: HashedString
    var environment: HashedString
    var realm: HashedString
    var client: HashedString
    var tokenType: HashedString
    var extCacheKey: HashedString
}

extension AccessTokenBucket {
    /// A bucket from its parts' text, each hashed here.
    init(account: String, environment: String, realm: String, client: String, tokenType: String, extCacheKey: String) {
        self.init(
            account: HashedString(account), environment: HashedString(environment), realm: HashedString(realm),
            client: HashedString(client), tokenType: HashedString(tokenType), extCacheKey: HashedString(extCacheKey))
    }
}

/// Where refresh tokens of one account and cloud are filed, by owning client or by family.
struct RefreshTokenBucket: Hashable, Sendable {
    var account: HashedString
    var environment: HashedString
    var owner: HashedString
}

/// The immutable, in-memory index of one group: every entry, and hash maps that answer every
/// query with work proportional to what it returns.
///
/// Every map is persistent (a ``LayeredMap``, or a `TreeDictionary` for the small ones): a
/// snapshot is an O(1) copy, and a write touches O(log n) nodes, so readers keep their snapshot
/// while a writer builds the next.
struct Index: Sendable {
    /// Every map lives in one copy-on-write box: passing the index around (a snapshot, a lookup)
    /// is one retain, not one per map; a writer copies the box (O(number of maps)) once.
    private final class Storage: @unchecked Sendable {
        var entries = EntryMap()
        var accessTokens: LayeredMap<AccessTokenBucket, [StoredEntry]> = LayeredMap()
        var ownRefreshTokens: LayeredMap<RefreshTokenBucket, [EntryID]> = LayeredMap()
        var familyRefreshTokens: LayeredMap<RefreshTokenBucket, [EntryID]> = LayeredMap()
        var accountsByHome: LayeredMap<HashedString, [EntryID]> = LayeredMap()
        var accountsByUsername: LayeredMap<HashedString, [EntryID]> = LayeredMap()
        var appMetadataByClient: LayeredMap<HashedString, [EntryID]> = LayeredMap()
        var accountsWithClientToken: LayeredMap<HashedString, LayeredMap<HashedString, Int>> = LayeredMap()
        var accountsWithFamilyToken: LayeredMap<HashedString, LayeredMap<HashedString, Int>> = LayeredMap()
        var entriesByAccount: LayeredMap<HashedString, [EntryID]> = LayeredMap()
        var clientStates: TreeDictionary<String, ClientState> = [:]
        var tenantAliases: TreeDictionary<String, String> = [:]
        var sections: [String] = []
        var unknownSections: TreeDictionary<String, JSONValue> = [:]
        var countByKind: [CredentialKind: Int] = [:]
        var nextOrdinal: UInt64 = 1

        init() {}

        func copy() -> Storage {
            let copy = Storage()
            copy.entries = entries
            copy.accessTokens = accessTokens
            copy.ownRefreshTokens = ownRefreshTokens
            copy.familyRefreshTokens = familyRefreshTokens
            copy.accountsByHome = accountsByHome
            copy.accountsByUsername = accountsByUsername
            copy.appMetadataByClient = appMetadataByClient
            copy.accountsWithClientToken = accountsWithClientToken
            copy.accountsWithFamilyToken = accountsWithFamilyToken
            copy.entriesByAccount = entriesByAccount
            copy.clientStates = clientStates
            copy.tenantAliases = tenantAliases
            copy.sections = sections
            copy.unknownSections = unknownSections
            copy.countByKind = countByKind
            copy.nextOrdinal = nextOrdinal
            return copy
        }
    }

    private var storage = Storage()

    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
    }

    private(set) var entries: EntryMap {
        get { storage.entries }
        _modify {
            makeUnique()
            yield &storage.entries
        }
    }
    /// Access tokens by bucket, held in the bucket itself: a hit hashes one key, not two.
    private(set) var accessTokens: LayeredMap<AccessTokenBucket, [StoredEntry]> {
        get { storage.accessTokens }
        _modify {
            makeUnique()
            yield &storage.accessTokens
        }
    }
    private(set) var ownRefreshTokens: LayeredMap<RefreshTokenBucket, [EntryID]> {
        get { storage.ownRefreshTokens }
        _modify {
            makeUnique()
            yield &storage.ownRefreshTokens
        }
    }
    private(set) var familyRefreshTokens: LayeredMap<RefreshTokenBucket, [EntryID]> {
        get { storage.familyRefreshTokens }
        _modify {
            makeUnique()
            yield &storage.familyRefreshTokens
        }
    }
    private(set) var accountsByHome: LayeredMap<HashedString, [EntryID]> {
        get { storage.accountsByHome }
        _modify {
            makeUnique()
            yield &storage.accountsByHome
        }
    }
    private(set) var accountsByUsername: LayeredMap<HashedString, [EntryID]> {
        get { storage.accountsByUsername }
        _modify {
            makeUnique()
            yield &storage.accountsByUsername
        }
    }
    private(set) var appMetadataByClient: LayeredMap<HashedString, [EntryID]> {
        get { storage.appMetadataByClient }
        _modify {
            makeUnique()
            yield &storage.appMetadataByClient
        }
    }
    /// client → accounts with a refresh token of that client → how many.
    private(set) var accountsWithClientToken: LayeredMap<HashedString, LayeredMap<HashedString, Int>> {
        get { storage.accountsWithClientToken }
        _modify {
            makeUnique()
            yield &storage.accountsWithClientToken
        }
    }
    /// family → accounts with a refresh token of that family → how many.
    private(set) var accountsWithFamilyToken: LayeredMap<HashedString, LayeredMap<HashedString, Int>> {
        get { storage.accountsWithFamilyToken }
        _modify {
            makeUnique()
            yield &storage.accountsWithFamilyToken
        }
    }
    /// account → every entry of the account, for every client.
    private(set) var entriesByAccount: LayeredMap<HashedString, [EntryID]> {
        get { storage.entriesByAccount }
        _modify {
            makeUnique()
            yield &storage.entriesByAccount
        }
    }
    private(set) var clientStates: TreeDictionary<String, ClientState> {
        get { storage.clientStates }
        _modify {
            makeUnique()
            yield &storage.clientStates
        }
    }
    /// Tenants requested by domain name → the tenant id their tokens are filed under.
    private(set) var tenantAliases: TreeDictionary<String, String> {
        get { storage.tenantAliases }
        _modify {
            makeUnique()
            yield &storage.tenantAliases
        }
    }
    /// The MSAL JSON section names in document order, as spelled in the imported file.
    private(set) var sections: [String] {
        get { storage.sections }
        _modify {
            makeUnique()
            yield &storage.sections
        }
    }
    /// Top-level sections this engine does not know, kept verbatim.
    private(set) var unknownSections: TreeDictionary<String, JSONValue> {
        get { storage.unknownSections }
        _modify {
            makeUnique()
            yield &storage.unknownSections
        }
    }
    private(set) var countByKind: [CredentialKind: Int] {
        get { storage.countByKind }
        _modify {
            makeUnique()
            yield &storage.countByKind
        }
    }
    /// The ordinal the next new entry gets.
    private(set) var nextOrdinal: UInt64 {
        get { storage.nextOrdinal }
        _modify {
            makeUnique()
            yield &storage.nextOrdinal
        }
    }

    /// The number of entries of every kind.
    var count: Int { entries.count }

    subscript(id: EntryID) -> StoredEntry? { entries[id] }

    // MARK: - Mutation

    /// Files `stored` under its id, replacing what was filed there.
    mutating func insert(_ stored: StoredEntry) {
        if let replaced = entries.updateValue(stored, forKey: stored.id) {
            // A refresh rewrites an entry under its key with the same account, client, cloud
            // and tenant: then only the bucket that holds entries by value changes.
            if Self.filedAlike(replaced, stored) {
                if case .accessToken(let token) = stored.entry {
                    let bucket = token.bucket
                    if var filed = accessTokens[bucket], let position = filed.firstIndex(where: { $0.id == stored.id }) {
                        filed[position] = stored
                        accessTokens[bucket] = filed
                    }
                }
                nextOrdinal = max(nextOrdinal, stored.ordinal + 1)
                return
            }
            countByKind[replaced.id.kind, default: 0] -= 1
            index(replaced, adding: false)
        }
        nextOrdinal = max(nextOrdinal, stored.ordinal + 1)
        countByKind[stored.id.kind, default: 0] += 1
        noteSection(stored.id.kind.sectionName)
        index(stored, adding: true)
    }

    /// Removes the entry filed under `id`, if any.
    mutating func remove(_ id: EntryID) {
        guard let stored = entries.removeValue(forKey: id) else { return }
        countByKind[id.kind, default: 0] -= 1
        index(stored, adding: false)
    }

    mutating func setClientState(_ state: ClientState, for client: String) {
        clientStates[client] = state.isEmpty ? nil : state
    }

    mutating func setSections(_ names: [String]) { sections = names }

    mutating func setTenantAlias(_ name: String, _ tenantId: String?) { tenantAliases[name] = tenantId }

    mutating func setUnknownSection(_ name: String, _ value: JSONValue?) {
        unknownSections[name] = value
        if value != nil { noteSection(name) }
    }

    /// Records a section name the first time an entry of it appears (msal-python's dict order).
    private mutating func noteSection(_ name: String) {
        if sections.contains(name) { return }
        let kind = CredentialKind(sectionName: name)
        let known = sections.contains { $0 == name || (kind != nil && CredentialKind(sectionName: $0) == kind) }
        if !known { sections.append(name) }
    }

    /// Whether two entries of one id are filed under the same keys of every map, so replacing
    /// one by the other leaves every map but the access-token buckets as it is.
    private static func filedAlike(_ old: StoredEntry, _ new: StoredEntry) -> Bool {
        guard old.entry.homeAccount == new.entry.homeAccount, old.entry.client == new.entry.client else { return false }
        switch (old.entry, new.entry) {
        case (.accessToken(let before), .accessToken(let after)):
            return before.bucket == after.bucket
        case (.refreshToken(let before), .refreshToken(let after)):
            return before.environment.groupKey == after.environment.groupKey && before.familyId == after.familyId
        case (.idToken, .idToken), (.appMetadata, .appMetadata):
            return true
        case (.account(let before), .account(let after)):
            return before.usernameKey == after.usernameKey
        default:
            return false
        }
    }

    private mutating func index(_ stored: StoredEntry, adding: Bool) {
        let id = stored.id
        switch stored.entry {
        case .accessToken(let token):
            let bucket = token.bucket
            if adding {
                var filed = accessTokens[bucket] ?? []
                filed.append(stored)
                accessTokens[bucket] = filed
            } else if var filed = accessTokens[bucket] {
                filed.removeAll { $0.id == id }
                accessTokens[bucket] = filed.isEmpty ? nil : filed
            }
        case .refreshToken(let token):
            let account = token.homeAccountId?.key ?? .empty
            let environment = token.environment.groupKey
            Self.update(
                &ownRefreshTokens, RefreshTokenBucket(account: account, environment: environment, owner: token.clientKey), id,
                adding)
            Self.count(&accountsWithClientToken, token.clientKey, account, adding)
            if let family = token.familyKey {
                Self.update(
                    &familyRefreshTokens, RefreshTokenBucket(account: account, environment: environment, owner: family), id,
                    adding)
                Self.count(&accountsWithFamilyToken, family, account, adding)
            }
        case .idToken: break
        case .account(let account):
            Self.update(&accountsByHome, account.homeAccountId.key, id, adding)
            if !account.username.isEmpty {
                Self.update(&accountsByUsername, account.usernameKey, id, adding)
            }
        case .appMetadata(let metadata):
            Self.update(&appMetadataByClient, metadata.clientKey, id, adding)
        }
        if let account = stored.entry.homeAccountKey { Self.update(&entriesByAccount, account, id, adding) }
    }

    private static func update<Key: Hashable>(
        _ map: inout LayeredMap<Key, [EntryID]>, _ key: Key, _ id: EntryID, _ adding: Bool
    ) {
        var ids = map[key] ?? []
        if adding {
            ids.append(id)
        } else {
            guard let position = ids.firstIndex(of: id) else { return }
            ids.remove(at: position)
        }
        map[key] = ids.isEmpty ? nil : ids
    }

    private static func count(
        _ map: inout LayeredMap<HashedString, LayeredMap<HashedString, Int>>, _ outer: HashedString, _ inner: HashedString,
        _ adding: Bool
    ) {
        var counts = map[outer] ?? LayeredMap()
        let next = (counts[inner] ?? 0) + (adding ? 1 : -1)
        counts[inner] = next > 0 ? next : nil
        map[outer] = counts.isEmpty ? nil : counts
    }

    // MARK: - Building in bulk

    /// Files `chunks` into an index that holds no entry yet, every map in one pass: what opening
    /// or reloading a group does with tens of thousands of entries, where inserting them one by
    /// one would update a dozen persistent maps per entry.
    ///
    /// The id map keeps `chunks` as they are (see ``EntryMap``); every other map is gathered in
    /// a plain dictionary that becomes the base of its ``LayeredMap``. Entries must have
    /// distinct ids (store records do); with a repeated id nothing is filed and the result is
    /// `false`.
    @discardableResult
    mutating func fileAll(_ chunks: [[StoredEntry]]) -> Bool {
        precondition(entries.isEmpty, "fileAll(_:) fills an index without entries")
        let total = chunks.reduce(0) { $0 + $1.count }
        // The id map's table touches only the ids' hashes (no reference counts): for a large
        // group it is built on the other processor while this one files the rest.
        let idMap = Mutex<EntryMap??>(nil)
        let buildIdMap: @Sendable () -> Void = { idMap.withLock { $0 = .some(EntryMap(chunks)) } }
        let builder = DispatchGroup()
        if total >= Self.parallelFilingThreshold, Processors.online > 1 {
            DispatchQueue.global(qos: .userInitiated).async(group: builder, execute: buildIdMap)
        } else {
            buildIdMap()
        }
        let all = chunks.joined()
        var accessTokens: [AccessTokenBucket: [StoredEntry]] = [:]
        var ownRefreshTokens: [RefreshTokenBucket: [EntryID]] = [:]
        var familyRefreshTokens: [RefreshTokenBucket: [EntryID]] = [:]
        var accountsByHome: [HashedString: [EntryID]] = [:]
        var accountsByUsername: [HashedString: [EntryID]] = [:]
        var appMetadataByClient: [HashedString: [EntryID]] = [:]
        var accountsWithClientToken: [HashedString: [HashedString: Int]] = [:]
        var accountsWithFamilyToken: [HashedString: [HashedString: Int]] = [:]
        var entriesByAccount: [HashedString: [EntryID]] = [:]
        // By `CredentialKind.creationOrder`: counted per entry, so no hashing.
        var countByKind = [Int](repeating: 0, count: CredentialKind.allCases.count)
        var firstOrdinalOfKind = [UInt64](repeating: .max, count: CredentialKind.allCases.count)
        var nextOrdinal = self.nextOrdinal
        // Sized for a cache shaped like real ones (a few access tokens per user and one refresh
        // token, id token and account each), so the maps never rehash while filling.
        accessTokens.reserveCapacity(total / 2)
        ownRefreshTokens.reserveCapacity(total / 6)
        familyRefreshTokens.reserveCapacity(total / 6)
        accountsByHome.reserveCapacity(total / 6)
        accountsByUsername.reserveCapacity(total / 6)
        entriesByAccount.reserveCapacity(total / 6)
        for stored in all {
            let id = stored.id
            let kind = id.kind.creationOrder
            countByKind[kind] += 1
            firstOrdinalOfKind[kind] = min(firstOrdinalOfKind[kind], stored.ordinal)
            nextOrdinal = max(nextOrdinal, stored.ordinal + 1)
            switch stored.entry {
            case .accessToken(let token):
                accessTokens[token.bucket, default: []].append(stored)
            case .refreshToken(let token):
                let account = token.homeAccountId?.key ?? .empty
                let environment = token.environment.groupKey
                ownRefreshTokens[
                    RefreshTokenBucket(account: account, environment: environment, owner: token.clientKey), default: []
                ]
                .append(id)
                accountsWithClientToken[token.clientKey, default: Self.accountCounts(total)][account, default: 0] += 1
                if let family = token.familyKey {
                    familyRefreshTokens[
                        RefreshTokenBucket(account: account, environment: environment, owner: family), default: []
                    ]
                    .append(id)
                    accountsWithFamilyToken[family, default: Self.accountCounts(total)][account, default: 0] += 1
                }
            case .idToken: break
            case .account(let account):
                accountsByHome[account.homeAccountId.key, default: []].append(id)
                if !account.username.isEmpty { accountsByUsername[account.usernameKey, default: []].append(id) }
            case .appMetadata(let metadata):
                appMetadataByClient[metadata.clientKey, default: []].append(id)
            }
            if let account = stored.entry.homeAccountKey { entriesByAccount[account, default: []].append(id) }
        }
        builder.wait()
        guard let built = idMap.withLock({ $0.take() }), let entries = built else { return false }
        let storage = self.storage(unique: ())
        storage.entries = entries
        storage.accessTokens = LayeredMap(accessTokens)
        storage.ownRefreshTokens = LayeredMap(ownRefreshTokens)
        storage.familyRefreshTokens = LayeredMap(familyRefreshTokens)
        storage.accountsByHome = LayeredMap(accountsByHome)
        storage.accountsByUsername = LayeredMap(accountsByUsername)
        storage.appMetadataByClient = LayeredMap(appMetadataByClient)
        storage.accountsWithClientToken = LayeredMap(accountsWithClientToken.mapValues { LayeredMap($0) })
        storage.accountsWithFamilyToken = LayeredMap(accountsWithFamilyToken.mapValues { LayeredMap($0) })
        storage.entriesByAccount = LayeredMap(entriesByAccount)
        var counted: [CredentialKind: Int] = [:]
        for kind in CredentialKind.allCases where countByKind[kind.creationOrder] > 0 {
            counted[kind] = countByKind[kind.creationOrder]
        }
        storage.countByKind = counted
        storage.nextOrdinal = nextOrdinal
        // Sections the layout record did not name, in the order their first entries were written.
        let written = CredentialKind.allCases.filter { firstOrdinalOfKind[$0.creationOrder] != .max }
        for kind in written.sorted(by: { firstOrdinalOfKind[$0.creationOrder] < firstOrdinalOfKind[$1.creationOrder] }) {
            noteSection(kind.sectionName)
        }
        return true
    }

    /// From this many entries on, ``fileAll(_:)`` builds the id map on another processor.
    static let parallelFilingThreshold = 4_096

    /// An empty map of accounts to counts, sized for a client with a refresh token for every
    /// user of a group of `entries` entries.
    private static func accountCounts(_ entries: Int) -> [HashedString: Int] {
        Dictionary(minimumCapacity: entries / 6)
    }

    /// The storage, copied first if another index shares it.
    private mutating func storage(unique: Void) -> Storage {
        makeUnique()
        return storage
    }

    // MARK: - Queries

    /// Entries of `ids`, in filing order.
    private func resolve(_ ids: [EntryID]?) -> [StoredEntry] {
        guard let ids else { return [] }
        return ids.compactMap { entries[$0] }
    }

    /// The best unexpired access token for a request: the requested scopes (reserved ones
    /// aside) are a case-insensitive subset of the token's, the token is not within `margin`
    /// seconds of expiry; among several, the one that lives longest.
    func accessToken(in bucket: AccessTokenBucket, scopes: Scopes, now: Int64, margin: Int64 = 300) -> AccessToken? {
        guard let filed = accessTokens[bucket] else { return nil }
        var best: AccessToken?
        for stored in filed {
            guard case .accessToken(let token) = stored.entry,
                !token.isExpired(at: now, margin: margin),
                scopes.isSubset(of: token.scopes)
            else { continue }
            if best.map({ token.expiresOn > $0.expiresOn }) ?? true { best = token }
        }
        return best
    }

    /// Access tokens filed in `bucket` whose scopes intersect `scopes` (rule 4's replacement set).
    func accessTokens(in bucket: AccessTokenBucket, intersecting scopes: Scopes) -> [StoredEntry] {
        (accessTokens[bucket] ?? []).filter {
            guard case .accessToken(let token) = $0.entry else { return false }
            return token.scopes.intersects(scopes) || token.scopes == scopes
        }
    }

    /// The client's own refresh tokens for the account in the environment's alias group,
    /// most recently written first.
    func ownRefreshTokens(account: String, environment: Environment, client: String) -> [StoredEntry] {
        resolve(
            ownRefreshTokens[
                RefreshTokenBucket(account: HashedString(account), environment: environment.groupKey, owner: HashedString(client))
            ]
        )
        .sorted(by: Self.newerRefreshToken)
    }

    /// The family's refresh tokens for the account, most recently written first.
    func familyRefreshTokens(account: String, environment: Environment, family: String) -> [StoredEntry] {
        resolve(
            familyRefreshTokens[
                RefreshTokenBucket(account: HashedString(account), environment: environment.groupKey, owner: HashedString(family))
            ]
        )
        .sorted(by: Self.newerRefreshToken)
    }

    private static func newerRefreshToken(_ lhs: StoredEntry, _ rhs: StoredEntry) -> Bool {
        guard case .refreshToken(let left) = lhs.entry, case .refreshToken(let right) = rhs.entry else { return false }
        let l = left.lastModificationTime ?? 0
        let r = right.lastModificationTime ?? 0
        return l != r ? l > r : lhs.ordinal > rhs.ordinal
    }

    /// The client's app metadata in the environment's alias group (or any, when `nil`).
    func appMetadata(client: String, environment: Environment?) -> StoredEntry? {
        resolve(appMetadataByClient[HashedString(client)]).first {
            guard case .appMetadata(let metadata) = $0.entry else { return false }
            return environment.map { metadata.environment.isAlias(of: $0) } ?? true
        }
    }

    /// The family whose refresh tokens the client may use (Apple SDK rules): the AppMetadata
    /// `family_id`; `"1"` when there is no AppMetadata yet; none when it is `""`.
    func family(of client: String, environment: Environment?) -> String? {
        guard let stored = appMetadata(client: client, environment: environment) else { return "1" }
        guard case .appMetadata(let metadata) = stored.entry, let family = metadata.familyId, !family.isEmpty else { return nil }
        return family
    }

    /// The refresh tokens a client may redeem for an account, in the order to try them:
    /// its own first, then its family's (rule 5).
    func refreshTokenCandidates(account: String, environment: Environment, client: String) -> [(
        entry: StoredEntry, isFamily: Bool
    )] {
        var result = ownRefreshTokens(account: account, environment: environment, client: client).map {
            (entry: $0, isFamily: false)
        }
        if let family = family(of: client, environment: environment) {
            for stored in familyRefreshTokens(account: account, environment: environment, family: family)
            where !result.contains(where: { $0.entry.id == stored.id }) {
                result.append((entry: stored, isFamily: true))
            }
        }
        return result
    }

    /// The home account ids a client sees (Apple SDK rules): those it can use a refresh token
    /// for (own or family) or signed into, minus those it signed out of.
    func visibleAccounts(client: String) -> [String] {
        let state = clientStates[client]
        var accounts = Set<String>()
        if let own = accountsWithClientToken[HashedString(client)] {
            own.forEach { account, _ in accounts.insert(account.value) }
        }
        if let family = family(of: client, environment: nil), let members = accountsWithFamilyToken[HashedString(family)] {
            members.forEach { account, _ in accounts.insert(account.value) }
        }
        if let state {
            accounts.formUnion(state.signedIn)
            accounts.subtract(state.signedOut)
        }
        return accounts.sorted()
    }

    /// Whether a client sees an account (the rules of ``visibleAccounts(client:)``), in O(1).
    func isVisible(_ account: String, to client: String) -> Bool {
        if let state = clientStates[client] {
            if state.signedOut.contains(account) { return false }
            if state.signedIn.contains(account) { return true }
        }
        let key = HashedString(account)
        if accountsWithClientToken[HashedString(client)]?[key] != nil { return true }
        guard let family = family(of: client, environment: nil) else { return false }
        return accountsWithFamilyToken[HashedString(family)]?[key] != nil
    }

    /// The account entry that stands for a home account: the one in its home tenant, else the
    /// first written.
    func primaryAccount(_ homeAccount: String) -> Account? {
        let accounts = resolve(accountsByHome[HashedString(homeAccount)]).sorted { $0.ordinal < $1.ordinal }.compactMap {
            stored -> Account? in
            guard case .account(let account) = stored.entry else { return nil }
            return account
        }
        return accounts.first { $0.realm.lowercased() == $0.homeAccountId.tenantId?.lowercased() } ?? accounts.first
    }

    /// Every account entry (every tenant) of a home account, in document order.
    func accountEntries(_ homeAccount: String) -> [StoredEntry] {
        resolve(accountsByHome[HashedString(homeAccount)]).sorted { $0.ordinal < $1.ordinal }
    }

    /// Every account entry (every tenant) of a home account.
    func tenantProfiles(_ homeAccount: String) -> [Account] {
        accountEntries(homeAccount).compactMap { stored -> Account? in
            guard case .account(let account) = stored.entry else { return nil }
            return account
        }
    }

    /// Accounts whose username matches, case-insensitively, one per home account.
    func accounts(username: String) -> [Account] {
        var seen = Set<String>()
        return resolve(accountsByUsername[HashedString(username.lowercased())]).sorted { $0.ordinal < $1.ordinal }.compactMap {
            stored in
            guard case .account(let account) = stored.entry, seen.insert(account.homeAccountId.normalised).inserted else {
                return nil
            }
            return primaryAccount(account.homeAccountId.normalised)
        }
    }

    /// The client's own access, refresh and id tokens for an account.
    ///
    /// Filtered from the account's entries (a handful per client): one map fewer to update on
    /// every write and to fill when a group opens.
    func credentials(account: String, client: String) -> [StoredEntry] {
        entries(account: account).filter { $0.id.kind != .appMetadata && $0.entry.client == client }
    }

    /// Every entry of an account, for every client.
    func entries(account: String) -> [StoredEntry] {
        guard let ids = entriesByAccount[HashedString(account)] else { return [] }
        return ids.compactMap { entries[$0] }
    }

    /// Access tokens expired at `now` (no margin): a scan, for purges at compaction and on request.
    func expiredAccessTokens(now: Int64) -> [EntryID] {
        entries.values.compactMap { stored in
            guard case .accessToken(let token) = stored.entry, token.expiresOn <= now else { return nil }
            return stored.id
        }
    }

    /// Every entry in MSAL document order: by section as first seen, then by ordinal.
    func documentOrder() -> [StoredEntry] {
        entries.values.sorted { $0.ordinal < $1.ordinal }
    }
}
