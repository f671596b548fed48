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
    /// The bucket of an access token with these members, whose user and cloud are already
    /// parsed: how the token files itself, and how opening a group files it without making it.
    init(parts: borrowing EntryParts, account: HomeAccountId?, environment: Environment) {
        let tokenType = parts.string(.tokenType) ?? ""
        self.init(
            account: account?.key ?? .empty,
            environment: environment.groupKey,
            realm: parts.lowercasedKey(.realm),
            client: parts.lowercasedKey(.clientId),
            tokenType: tokenType.isEmpty ? .bearer : parts.lowercasedKey(.tokenType),
            extCacheKey: parts.extCacheKey() == nil ? .empty : parts.lowercasedKey(.extCacheKey))
    }

    /// A bucket from its parts' text, each hashed here.
    init(account: String, environment: String, realm: String, client: String, tokenType: String, extCacheKey: String) {
        self.init(
            account: HashedString(account), environment: HashedString(environment), realm: HashedString(realm),
            client: HashedString(client), tokenType: HashedString(tokenType), extCacheKey: HashedString(extCacheKey))
    }
}

extension AccessTokenBucket: PrehashedKey {
    /// The parts' hashes, combined.
    var prehash: Int {
        var hash = HashMixer.combine(HashMixer.seed, account.prehash)
        hash = HashMixer.combine(hash, environment.prehash)
        hash = HashMixer.combine(hash, realm.prehash)
        hash = HashMixer.combine(hash, client.prehash)
        hash = HashMixer.combine(hash, tokenType.prehash)
        return HashMixer.combine(hash, extCacheKey.prehash)
    }
}

/// Where refresh tokens of one account and cloud are filed, by owning client or by family.
struct RefreshTokenBucket: Hashable, Sendable {
    var account: HashedString
    var environment: HashedString
    var owner: HashedString
}

extension RefreshTokenBucket: PrehashedKey {
    /// The parts' hashes, combined.
    var prehash: Int {
        let hash = HashMixer.combine(HashMixer.combine(HashMixer.seed, account.prehash), environment.prehash)
        return HashMixer.combine(hash, owner.prehash)
    }
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
        var accessTokens: LayeredMap<AccessTokenBucket, Filed<StoredEntry>> = LayeredMap()
        var ownRefreshTokens: LayeredMap<RefreshTokenBucket, Filed<EntryID>> = LayeredMap()
        var familyRefreshTokens: LayeredMap<RefreshTokenBucket, Filed<EntryID>> = LayeredMap()
        var accountsByHome: LayeredMap<HashedString, Filed<EntryID>> = LayeredMap()
        var accountsByUsername: LayeredMap<HashedString, Filed<EntryID>> = LayeredMap()
        var appMetadataByClient: LayeredMap<HashedString, Filed<EntryID>> = LayeredMap()
        var accountsWithClientToken: LayeredMap<HashedString, LayeredMap<HashedString, Int>> = LayeredMap()
        var accountsWithFamilyToken: LayeredMap<HashedString, LayeredMap<HashedString, Int>> = LayeredMap()
        var entriesByAccount: LayeredMap<HashedString, Filed<EntryID>> = LayeredMap()
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
    private(set) var accessTokens: LayeredMap<AccessTokenBucket, Filed<StoredEntry>> {
        get { storage.accessTokens }
        _modify {
            makeUnique()
            yield &storage.accessTokens
        }
    }
    private(set) var ownRefreshTokens: LayeredMap<RefreshTokenBucket, Filed<EntryID>> {
        get { storage.ownRefreshTokens }
        _modify {
            makeUnique()
            yield &storage.ownRefreshTokens
        }
    }
    private(set) var familyRefreshTokens: LayeredMap<RefreshTokenBucket, Filed<EntryID>> {
        get { storage.familyRefreshTokens }
        _modify {
            makeUnique()
            yield &storage.familyRefreshTokens
        }
    }
    private(set) var accountsByHome: LayeredMap<HashedString, Filed<EntryID>> {
        get { storage.accountsByHome }
        _modify {
            makeUnique()
            yield &storage.accountsByHome
        }
    }
    private(set) var accountsByUsername: LayeredMap<HashedString, Filed<EntryID>> {
        get { storage.accountsByUsername }
        _modify {
            makeUnique()
            yield &storage.accountsByUsername
        }
    }
    private(set) var appMetadataByClient: LayeredMap<HashedString, Filed<EntryID>> {
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
    private(set) var entriesByAccount: LayeredMap<HashedString, Filed<EntryID>> {
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
                    if var filed = accessTokens[bucket]?.entries, let position = filed.firstIndex(where: { $0.id == stored.id }) {
                        filed[position] = stored
                        accessTokens[bucket] = .values(filed)
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
                var filed = accessTokens[bucket]?.entries ?? []
                filed.append(stored)
                accessTokens[bucket] = .values(filed)
            } else if var filed = accessTokens[bucket]?.entries {
                filed.removeAll { $0.id == id }
                accessTokens[bucket] = filed.isEmpty ? nil : .values(filed)
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

    private static func update<Key: PrehashedKey>(
        _ map: inout LayeredMap<Key, Filed<EntryID>>, _ key: Key, _ id: EntryID, _ adding: Bool
    ) {
        var ids = map[key]?.ids ?? []
        if adding {
            ids.append(id)
        } else {
            guard let position = ids.firstIndex(of: id) else { return }
            ids.remove(at: position)
        }
        map[key] = ids.isEmpty ? nil : .values(ids)
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

    /// Files every entry `filing` gathered into an index that holds no entry yet, every map in
    /// one go: what opening or reloading a group does with tens of thousands of entries, where
    /// inserting them one by one would update a dozen persistent maps per entry.
    ///
    /// The entries become the rows of one ``EntryTable``, the base of the id map; every other
    /// map's base is the filing's ``Grouping`` of rows. Entries must have distinct ids (store
    /// records do).
    ///
    /// - Returns: `nil` when every entry was filed; when two have the same id, nothing was
    ///   filed, and the result is every gathered entry, typed, in order.
    mutating func fileAll(_ filing: consuming BulkFiling) -> [StoredEntry]? {
        precondition(entries.isEmpty, "fileAll(_:) fills an index without entries")
        let table = EntryTable(chunks: filing.rows.takeChunks())
        // The id map's table touches only the ids' hashes (no reference counts): for a large
        // group it is built on the other processor while this one lays out the rest.
        let idMap = Mutex<EntryMap??>(nil)
        let buildIdMap: @Sendable () -> Void = { idMap.withLock { $0 = .some(EntryMap(table)) } }
        let builder = DispatchGroup()
        if table.count >= Self.parallelFilingThreshold, Processors.online > 1 {
            DispatchQueue.global(qos: .userInitiated).async(group: builder, execute: buildIdMap)
        } else {
            buildIdMap()
        }
        let accessTokens: LayeredMap<AccessTokenBucket, Filed<StoredEntry>> = filing.maps.accessTokens.map(of: table)
        let ownRefreshTokens: LayeredMap<RefreshTokenBucket, Filed<EntryID>> = filing.maps.ownRefreshTokens.map(of: table)
        let familyRefreshTokens: LayeredMap<RefreshTokenBucket, Filed<EntryID>> = filing.maps.familyRefreshTokens.map(of: table)
        let accountsByHome: LayeredMap<HashedString, Filed<EntryID>> = filing.maps.accountsByHome.map(of: table)
        let accountsByUsername: LayeredMap<HashedString, Filed<EntryID>> = filing.maps.accountsByUsername.map(of: table)
        let appMetadataByClient: LayeredMap<HashedString, Filed<EntryID>> = filing.maps.appMetadataByClient.map(of: table)
        let entriesByAccount: LayeredMap<HashedString, Filed<EntryID>> = filing.maps.entriesByAccount.map(of: table)
        builder.wait()
        guard let built = idMap.withLock({ $0.take() }), let entries = built else {
            return (0..<table.count).map(table.stored(at:))
        }
        let storage = self.storage(unique: ())
        storage.entries = entries
        storage.accessTokens = accessTokens
        storage.ownRefreshTokens = ownRefreshTokens
        storage.familyRefreshTokens = familyRefreshTokens
        storage.accountsByHome = accountsByHome
        storage.accountsByUsername = accountsByUsername
        storage.appMetadataByClient = appMetadataByClient
        storage.accountsWithClientToken = Self.accountCounts(filing.maps.ownRefreshTokens)
        storage.accountsWithFamilyToken = Self.accountCounts(filing.maps.familyRefreshTokens)
        storage.entriesByAccount = entriesByAccount
        var counted: [CredentialKind: Int] = [:]
        for kind in CredentialKind.allCases where filing.rows.countByKind[kind.creationOrder] > 0 {
            counted[kind] = filing.rows.countByKind[kind.creationOrder]
        }
        storage.countByKind = counted
        storage.nextOrdinal = max(storage.nextOrdinal, filing.rows.nextOrdinal)
        // Sections the layout record did not name, in the order their first entries were written.
        let first = filing.rows.firstOrdinalOfKind
        let written = CredentialKind.allCases.filter { first[$0.creationOrder] != .max }
        for kind in written.sorted(by: { first[$0.creationOrder] < first[$1.creationOrder] }) {
            noteSection(kind.sectionName)
        }
        return nil
    }

    /// Owner (client or family) → account → how many refresh tokens it has there, from the
    /// refresh tokens gathered by bucket: counted per bucket, not per entry.
    private static func accountCounts(
        _ buckets: Grouping<RefreshTokenBucket>
    ) -> LayeredMap<HashedString, LayeredMap<HashedString, Int>> {
        var owners = KeyTable<HashedString>()
        var accounts: [(keys: KeyTable<HashedString>, counts: [Int])] = []
        buckets.forEachKey { bucket, count in
            let owner = owners.add(bucket.owner)
            if owner == accounts.count { accounts.append((KeyTable(), [])) }
            let account = accounts[owner].keys.add(bucket.account)
            if account == accounts[owner].counts.count { accounts[owner].counts.append(0) }
            accounts[owner].counts[account] += count
        }
        return LayeredMap(keys: owners, values: accounts.map { LayeredMap(keys: $0.keys, values: $0.counts) })
    }

    /// From this many entries on, ``fileAll(_:)`` builds the id map on another processor.
    static let parallelFilingThreshold = 4_096

    /// The storage, copied first if another index shares it.
    private mutating func storage(unique: Void) -> Storage {
        makeUnique()
        return storage
    }

    // MARK: - Inspection

    /// Every map's keys and what each files, in filing order, as text: two indexes that file
    /// the same entries alike (one opened in bulk, one built entry by entry, say) give equal
    /// results. For tests and diagnostics; it visits every entry.
    func filingContents() -> [String: [String: [String]]] {
        func ids(_ filed: Filed<EntryID>) -> [String] { filed.ids.map { "\($0.kind) \($0.key)" } }
        func describe<Key>(_ map: LayeredMap<Key, Filed<EntryID>>, _ name: (Key) -> String) -> [String: [String]] {
            var contents: [String: [String]] = [:]
            map.forEach { key, filed in contents[name(key)] = ids(filed) }
            return contents
        }
        let bucket = { (bucket: RefreshTokenBucket) in "\(bucket.account)|\(bucket.environment)|\(bucket.owner)" }
        var contents: [String: [String: [String]]] = [
            "ownRefreshTokens": describe(ownRefreshTokens, bucket),
            "familyRefreshTokens": describe(familyRefreshTokens, bucket),
            "accountsByHome": describe(accountsByHome, \.value),
            "accountsByUsername": describe(accountsByUsername, \.value),
            "appMetadataByClient": describe(appMetadataByClient, \.value),
            "entriesByAccount": describe(entriesByAccount, \.value),
        ]
        var tokens: [String: [String]] = [:]
        accessTokens.forEach { bucket, filed in
            let name = [bucket.account, bucket.environment, bucket.realm, bucket.client, bucket.tokenType, bucket.extCacheKey]
                .map(\.value).joined(separator: "|")
            tokens[name] = filed.entries.map { "\($0.id.kind) \($0.id.key)" }
        }
        contents["accessTokens"] = tokens
        for (name, map) in [
            ("accountsWithClientToken", accountsWithClientToken), ("accountsWithFamilyToken", accountsWithFamilyToken),
        ] {
            var counts: [String: [String]] = [:]
            map.forEach { owner, accounts in
                var listed: [String] = []
                accounts.forEach { account, count in listed.append("\(account) \(count)") }
                counts[owner.value] = listed.sorted()
            }
            contents[name] = counts
        }
        return contents
    }

    // MARK: - Queries

    /// The entries filed under one key of a map of ids, in filing order, as they are now.
    private func resolve(_ filed: Filed<EntryID>?) -> [StoredEntry] {
        switch filed {
        case .rows(let table, let rows)?: rows.compactMap { entries.current(row: Int($0), of: table) }
        case .values(let ids)?: ids.compactMap { entries[$0] }
        case nil: []
        }
    }

    /// ``resolve(_:)`` one entry at a time, without gathering them into an array (for queries
    /// that keep one of them).
    private func forEachResolved(_ filed: Filed<EntryID>?, _ body: (StoredEntry) -> Void) {
        switch filed {
        case .rows(let table, let rows)?:
            for row in rows { if let stored = entries.current(row: Int(row), of: table) { body(stored) } }
        case .values(let ids)?:
            for id in ids { if let stored = entries[id] { body(stored) } }
        case nil: break
        }
    }

    /// The best unexpired access token for a request: the requested scopes (reserved ones
    /// aside) are a case-insensitive subset of the token's, the token is not within `margin`
    /// seconds of expiry; among several, the one that lives longest.
    func accessToken(in bucket: AccessTokenBucket, scopes: Scopes, now: Int64, margin: Int64 = 300) -> AccessToken? {
        var best: AccessToken?
        func consider(_ entry: CacheEntry) {
            guard case .accessToken(let token) = entry,
                !token.isExpired(at: now, margin: margin),
                scopes.isSubset(of: token.scopes)
            else { return }
            if best.map({ token.expiresOn > $0.expiresOn }) ?? true { best = token }
        }
        // A bucket's rows are never stale: any change to the bucket makes it values first.
        switch accessTokens[bucket] {
        case .rows(let table, let rows)?: for row in rows { consider(table.entry(at: Int(row))) }
        case .values(let filed)?: for stored in filed { consider(stored.entry) }
        case nil: return nil
        }
        return best
    }

    /// Access tokens filed in `bucket` whose scopes intersect `scopes` (rule 4's replacement set).
    func accessTokens(in bucket: AccessTokenBucket, intersecting scopes: Scopes) -> [StoredEntry] {
        (accessTokens[bucket]?.entries ?? []).filter {
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
        var found: StoredEntry?
        forEachResolved(appMetadataByClient[HashedString(client)]) { stored in
            guard found == nil, case .appMetadata(let metadata) = stored.entry,
                environment.map({ metadata.environment.isAlias(of: $0) }) ?? true
            else { return }
            found = stored
        }
        return found
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
        // Gathered, sorted and freed of repeats (its own tokens, its family's and its sign-ins
        // can name one account more than once), not put in a set: a set hashes every 73-byte
        // id again, and a client sees few accounts.
        var accounts: [String] = []
        if let own = accountsWithClientToken[HashedString(client)] {
            own.forEach { account, _ in accounts.append(account.value) }
        }
        if let family = family(of: client, environment: nil), let members = accountsWithFamilyToken[HashedString(family)] {
            members.forEach { account, _ in accounts.append(account.value) }
        }
        if let state = clientStates[client] {
            accounts += state.signedIn
            if !state.signedOut.isEmpty { accounts.removeAll { state.signedOut.contains($0) } }
        }
        accounts.sort()
        var unique = 0
        for index in accounts.indices where unique == 0 || accounts[unique - 1] != accounts[index] {
            accounts[unique] = accounts[index]
            unique += 1
        }
        accounts.removeSubrange(unique...)
        return accounts
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
        var first: (account: Account, ordinal: UInt64)?
        var home: (account: Account, ordinal: UInt64)?
        forEachResolved(accountsByHome[HashedString(homeAccount)]) { stored in
            guard case .account(let account) = stored.entry else { return }
            if first.map({ stored.ordinal < $0.ordinal }) ?? true { first = (account, stored.ordinal) }
            if account.realm.asciiLowercased == account.homeAccountId.normalisedTenantId,
                home.map({ stored.ordinal < $0.ordinal }) ?? true
            {
                home = (account, stored.ordinal)
            }
        }
        return home?.account ?? first?.account
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
        resolve(entriesByAccount[HashedString(account)])
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
