import Dispatch
import HashTreeCollections
import Synchronization

/// The immutable, in-memory index of one group: every entry, and hash maps that answer every
/// query with work proportional to what it returns.
///
/// Every map is persistent (a ``LayeredMap``, or a `TreeDictionary` for the small ones): a
/// snapshot is an O(1) copy, and a write touches O(log n) nodes, so readers keep their snapshot
/// while a writer builds the next. Which entry is filed in which map is ``IndexMaps/table``.
struct Index: Sendable {
    /// Everything the index holds.
    private struct State: Sendable {
        /// ``Index/entries``.
        var entries = EntryMap()
        /// Every other map of entries.
        var maps = IndexMaps()
        /// ``Index/clientStates``.
        var clientStates: TreeDictionary<String, ClientState> = [:]
        /// ``Index/tenantAliases``.
        var tenantAliases: TreeDictionary<String, String> = [:]
        /// ``Index/sections``.
        var sections: [String] = []
        /// ``Index/unknownSections``.
        var unknownSections: TreeDictionary<String, JSONValue> = [:]
        /// ``Index/countByKind``.
        var countByKind: [CredentialKind: Int] = [:]
        /// ``Index/nextOrdinal``.
        var nextOrdinal: UInt64 = 1
    }

    /// The state in one copy-on-write box: passing the index around (a snapshot, a lookup) is
    /// one retain, not one per map; a writer copies the box (O(number of maps)) once.
    private final class Storage: @unchecked Sendable {
        /// What the box holds.
        var state: State
        /// A box holding `state`.
        init(_ state: State) { self.state = state }
    }

    /// The box; shared by copies of the index until one of them writes.
    private var storage = Storage(State())

    /// The state, read in place, and copied first when written while another index shares it.
    private var state: State {
        _read { yield storage.state }
        _modify {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.state) }
            yield &storage.state
        }
    }

    /// Every entry by id.
    var entries: EntryMap { state.entries }
    /// Per-client sign-in state, by client.
    var clientStates: TreeDictionary<String, ClientState> { state.clientStates }
    /// Tenants requested by domain name → the tenant id their tokens are filed under.
    var tenantAliases: TreeDictionary<String, String> { state.tenantAliases }
    /// The MSAL JSON section names in document order, as spelled in the imported file.
    var sections: [String] { state.sections }
    /// Top-level sections this engine does not know, kept verbatim.
    var unknownSections: TreeDictionary<String, JSONValue> { state.unknownSections }
    /// How many entries of each kind.
    var countByKind: [CredentialKind: Int] { state.countByKind }
    /// The ordinal the next new entry gets.
    var nextOrdinal: UInt64 { state.nextOrdinal }

    /// Account entries by home account (its `count` is how many users have one).
    var accountsByHome: LayeredMap<HashedString, Filed<EntryID>> { state.maps.accountsByHome }

    /// The number of entries of every kind.
    var count: Int { entries.count }

    /// The entry filed under `id`.
    subscript(id: EntryID) -> StoredEntry? { entries[id] }

    // MARK: - Mutation

    /// Files `stored` under its id, replacing what was filed there.
    mutating func insert(_ stored: StoredEntry) {
        if let replaced = state.entries.updateValue(stored, forKey: stored.id) {
            // A refresh rewrites an entry under its key with the same account, client, cloud
            // and tenant: then only the maps that hold entries by value change.
            if IndexMaps.filesAlike(replaced.entry, stored.entry) {
                state.maps.refile(stored)
                state.nextOrdinal = max(state.nextOrdinal, stored.ordinal + 1)
                return
            }
            state.countByKind[replaced.id.kind, default: 0] -= 1
            state.maps.file(replaced, adding: false)
        }
        state.nextOrdinal = max(state.nextOrdinal, stored.ordinal + 1)
        state.countByKind[stored.id.kind, default: 0] += 1
        noteSection(stored.id.kind.sectionName)
        state.maps.file(stored, adding: true)
    }

    /// Removes the entry filed under `id`, if any; returns whether there was one.
    @discardableResult
    mutating func remove(_ id: EntryID) -> Bool {
        guard let stored = state.entries.removeValue(forKey: id) else { return false }
        state.countByKind[id.kind, default: 0] -= 1
        state.maps.file(stored, adding: false)
        return true
    }

    /// Sets a client's sign-in state; an empty one is not kept.
    mutating func setClientState(_ clientState: ClientState, for client: String) {
        state.clientStates[client] = clientState.isEmpty ? nil : clientState
    }

    /// Sets a client's current and previous account, leaving where its accounts stand (stored a
    /// record per account from now on).
    mutating func setClientHead(of client: String, current: String?, previous: String?) {
        changeClientState(client) {
            $0.current = current
            $0.previous = previous
            $0.listedInClientRecord = false
        }
    }

    /// Sets where `account` stands with `client` (`nil`: neither signed in nor out), from the
    /// account's own record.
    mutating func setStanding(_ standing: SignInStanding?, of account: String, for client: String) {
        changeClientState(client) {
            $0.setStanding(standing, of: account)
            $0.listedInClientRecord = false
        }
    }

    /// Ends a client's state on the removal of its own record: the whole state when that record
    /// listed it, else its current and previous account (the accounts' own records go one by one;
    /// in a group held in part, others may stand that this index does not hold).
    mutating func removeClientState(of client: String) {
        guard let clientState = state.clientStates[client] else { return }
        if clientState.listedInClientRecord {
            state.clientStates[client] = nil
        } else {
            setClientHead(of: client, current: nil, previous: nil)
        }
    }

    /// Forgets where `accounts` stand with every client, in memory only (their records stay):
    /// for partitions a group drops from memory.
    mutating func forgetStandings(of accounts: Set<String>) {
        guard !accounts.isEmpty else { return }
        for client in state.clientStates.keys {
            guard let clientState = state.clientStates[client],
                accounts.contains(where: { clientState.standing(of: $0) != nil })
            else { continue }
            changeClientState(client) { changed in
                for account in accounts { changed.setStanding(nil, of: account) }
            }
        }
    }

    /// Changes a client's sign-in state, taken out of the map so that nothing else holds it
    /// while it changes, and lets go of it when it becomes empty.
    private mutating func changeClientState(_ client: String, _ body: (inout ClientState) -> Void) {
        var clientState = state.clientStates.removeValue(forKey: client) ?? ClientState()
        body(&clientState)
        if !clientState.isEmpty { state.clientStates[client] = clientState }
    }

    /// Sets the section names in document order.
    mutating func setSections(_ names: [String]) { state.sections = names }

    /// Sets (or, with `nil`, removes) the tenant id a tenant's domain name stands for.
    mutating func setTenantAlias(_ name: String, _ tenantId: String?) { state.tenantAliases[name] = tenantId }

    /// Sets (or, with `nil`, removes) a section this engine does not know.
    mutating func setUnknownSection(_ name: String, _ value: JSONValue?) {
        state.unknownSections[name] = value
        if value != nil { noteSection(name) }
    }

    /// Records a section name the first time an entry of it appears (msal-python's dict order).
    private mutating func noteSection(_ name: String) {
        if state.sections.contains(name) { return }
        let kind = CredentialKind(sectionName: name)
        let known = state.sections.contains { $0 == name || (kind != nil && CredentialKind(sectionName: $0) == kind) }
        if !known { state.sections.append(name) }
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
        var maps = IndexMaps()
        for (rule, gathered) in zip(IndexMaps.table, filing.maps) { rule.install(gathered, rows: table, in: &maps) }
        builder.wait()
        guard let built = idMap.withLock({ $0.take() }), let entries = built else {
            return (0..<table.count).map(table.stored(at:))
        }
        state.entries = entries
        state.maps = maps
        var counted: [CredentialKind: Int] = [:]
        for kind in CredentialKind.allCases where filing.rows.countByKind[kind.creationOrder] > 0 {
            counted[kind] = filing.rows.countByKind[kind.creationOrder]
        }
        state.countByKind = counted
        state.nextOrdinal = max(state.nextOrdinal, filing.rows.nextOrdinal)
        // Sections the layout record did not name, in the order their first entries were written.
        let first = filing.rows.firstOrdinalOfKind
        let written = CredentialKind.allCases.filter { first[$0.creationOrder] != .max }
        for kind in written.sorted(by: { first[$0.creationOrder] < first[$1.creationOrder] }) {
            noteSection(kind.sectionName)
        }
        return nil
    }

    /// Files again, in one go, an index that holds entries: its entries and maps become those of
    /// `filing`, which gathered every entry the index is to hold (``fileAll(_:)``); everything
    /// else it holds stays.
    ///
    /// - Returns: `nil` when every entry was filed; when two have the same id, the index is left
    ///   as it was, and the result is every gathered entry, typed, in order.
    mutating func refileAll(_ filing: consuming BulkFiling) -> [StoredEntry]? {
        var refiled = self
        refiled.state.entries = EntryMap()
        refiled.state.maps = IndexMaps()
        refiled.state.countByKind = [:]
        if let repeated = refiled.fileAll(filing) { return repeated }
        self = refiled
        return nil
    }

    /// From this many entries on, ``fileAll(_:)`` builds the id map on another processor.
    static let parallelFilingThreshold = 4_096

    // MARK: - Inspection

    /// Every map's keys and what each files, in filing order, as text, by map: two indexes that
    /// file the same entries alike (one opened in bulk, one built entry by entry, say) give equal
    /// results. For tests and diagnostics; it visits every entry.
    func filingContents() -> [String: [String: [String]]] {
        var contents: [String: [String: [String]]] = [:]
        for rule in IndexMaps.table { contents.merge(rule.contents(of: state.maps)) { first, _ in first } }
        return contents
    }

    // MARK: - Queries

    /// The entries filed under one key of a map of ids, in filing order, as they are now.
    private func resolve(_ filed: Filed<EntryID>?) -> [StoredEntry] {
        switch filed {
        case .rows(let filed)?: filed.rows.compactMap { entries.current(row: Int($0), of: filed.table) }
        case .values(let ids)?: ids.compactMap { entries[$0] }
        case nil: []
        }
    }

    /// ``resolve(_:)`` one entry at a time, without gathering them into an array (for queries
    /// that keep one of them).
    private func forEachResolved(_ filed: Filed<EntryID>?, _ body: (StoredEntry) -> Void) {
        switch filed {
        case .rows(let filed)?:
            let table = filed.table
            for row in filed.rows { if let stored = entries.current(row: Int(row), of: table) { body(stored) } }
        case .values(let ids)?:
            for id in ids { if let stored = entries[id] { body(stored) } }
        case nil: break
        }
    }

    /// The best unexpired access token for a request: the requested scopes (reserved ones
    /// aside) are a case-insensitive subset of the token's, the token is not within `margin`
    /// seconds of expiry; among several, the one that lives longest.
    func accessToken(in bucket: AccessTokenBucket, scopes: Scopes, now: Int64, margin: Int64 = 300) -> AccessToken? {
        Self.accessToken(in: state.maps.accessTokens[bucket], scopes: scopes, now: now, margin: margin)
    }

    /// ``accessToken(in:scopes:now:margin:)`` for a bucket that may hold a great many tokens (a
    /// tenant's app tokens, one per resource): the token filed under `key`, msal-python's key
    /// for exactly these scopes, answers at once when it is in the bucket and valid; only
    /// otherwise is the bucket scanned.
    func accessToken(in bucket: AccessTokenBucket, key: EntryID, scopes: Scopes, now: Int64, margin: Int64 = 300)
        -> AccessToken?
    {
        if let stored = entries[key], case .accessToken(let token) = stored.entry, token.assertionKey == nil,
            token.bucket == bucket, !token.isExpired(at: now, margin: margin),
            scopes.isSubset(of: token.scopes)
        {
            return token
        }
        return accessToken(in: bucket, scopes: scopes, now: now, margin: margin)
    }

    /// ``accessToken(in:scopes:now:margin:)`` among on-behalf-of tokens, whose bucket's account
    /// part is the assertion hash's key.
    func onBehalfOfAccessToken(in bucket: AccessTokenBucket, scopes: Scopes, now: Int64, margin: Int64 = 300) -> AccessToken? {
        Self.accessToken(in: state.maps.onBehalfOfAccessTokens[bucket], scopes: scopes, now: now, margin: margin)
    }

    /// The longest-lived token among `filed` that covers `scopes` and lives `margin` s past `now`.
    @inline(__always)
    private static func accessToken(in filed: Filed<StoredEntry>?, scopes: Scopes, now: Int64, margin: Int64) -> AccessToken? {
        var best: AccessToken?
        func consider(_ entry: CacheEntry) {
            guard case .accessToken(let token) = entry,
                !token.isExpired(at: now, margin: margin),
                scopes.isSubset(of: token.scopes)
            else { return }
            if best.map({ token.expiresOn > $0.expiresOn }) ?? true { best = token }
        }
        // A bucket's rows are never stale: any change to the bucket makes it values first.
        switch filed {
        case .rows(let filed)?:
            let table = filed.table
            for row in filed.rows { consider(table.entry(at: Int(row))) }
        case .values(let filed)?: for stored in filed { consider(stored.entry) }
        case nil: return nil
        }
        return best
    }

    /// Access tokens filed in `bucket` (among on-behalf-of tokens when `onBehalfOf`) whose scopes
    /// intersect `scopes` (rule 4's replacement set).
    func accessTokens(in bucket: AccessTokenBucket, intersecting scopes: Scopes, onBehalfOf: Bool = false) -> [StoredEntry] {
        let filed = onBehalfOf ? state.maps.onBehalfOfAccessTokens[bucket] : state.maps.accessTokens[bucket]
        return (filed?.entries ?? []).filter {
            guard case .accessToken(let token) = $0.entry else { return false }
            return token.scopes.intersects(scopes) || token.scopes == scopes
        }
    }

    /// The client's own refresh tokens for the account in the environment's alias group,
    /// most recently written first.
    func ownRefreshTokens(account: String, environment: Environment, client: String) -> [StoredEntry] {
        resolve(
            state.maps.ownRefreshTokens[
                RefreshTokenBucket(account: HashedString(account), environment: environment.groupKey, owner: HashedString(client))
            ]
        )
        .sorted(by: Self.newerRefreshToken)
    }

    /// The client's refresh tokens of the long-running on-behalf-of session whose key's index key
    /// is `session` (``UserAssertion/key(of:)``), most recently written first.
    func onBehalfOfRefreshTokens(session: HashedString, environment: Environment, client: String) -> [StoredEntry] {
        resolve(
            state.maps.onBehalfOfRefreshTokens[
                RefreshTokenBucket(account: session, environment: environment.groupKey, owner: HashedString(client))
            ]
        )
        .sorted(by: Self.newerRefreshToken)
    }

    /// The family's refresh tokens for the account, most recently written first.
    func familyRefreshTokens(account: String, environment: Environment, family: String) -> [StoredEntry] {
        resolve(
            state.maps.familyRefreshTokens[
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
        forEachResolved(state.maps.appMetadataByClient[HashedString(client)]) { stored in
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
        if let own = state.maps.accountsWithClientToken[HashedString(client)] {
            own.forEach { account, _ in accounts.append(account.value) }
        }
        if let family = family(of: client, environment: nil),
            let members = state.maps.accountsWithFamilyToken[HashedString(family)]
        {
            members.forEach { account, _ in accounts.append(account.value) }
        }
        if let signIns = clientStates[client] {
            accounts += signIns.signedIn
            if !signIns.signedOut.isEmpty { accounts.removeAll { signIns.signedOut.contains($0) } }
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
        if let signIns = clientStates[client] {
            if signIns.signedOut.contains(account) { return false }
            if signIns.signedIn.contains(account) { return true }
        }
        let key = HashedString(account)
        if state.maps.accountsWithClientToken[HashedString(client)]?[key] != nil { return true }
        guard let family = family(of: client, environment: nil) else { return false }
        return state.maps.accountsWithFamilyToken[HashedString(family)]?[key] != nil
    }

    /// The account entry that stands for a home account: the one in its home tenant, else the
    /// first written.
    func primaryAccount(_ homeAccount: String) -> Account? {
        var first: (account: Account, ordinal: UInt64)?
        var home: (account: Account, ordinal: UInt64)?
        forEachResolved(state.maps.accountsByHome[HashedString(homeAccount)]) { stored in
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
        resolve(state.maps.accountsByHome[HashedString(homeAccount)]).sorted { $0.ordinal < $1.ordinal }
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
        return resolve(state.maps.accountsByUsername[HashedString(username.lowercased())]).sorted { $0.ordinal < $1.ordinal }
            .compactMap {
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
        // An account entry belongs to no client: passed over by its id, never looked up.
        entries(account: account) { $0 != .account }.filter { $0.entry.client == client }
    }

    /// Every entry of an account, for every client.
    func entries(account: String) -> [StoredEntry] {
        resolve(state.maps.entriesByAccount[HashedString(account)])
    }

    /// The entries of one kind of an account, for every client, in filing order: the others are
    /// passed over by their ids, never looked up.
    func entries(account: String, kind: CredentialKind) -> [StoredEntry] {
        entries(account: account) { $0 == kind }
    }

    /// The entries of an account whose kind is `included`, for every client, in filing order.
    private func entries(account: String, where included: (CredentialKind) -> Bool) -> [StoredEntry] {
        var found: [StoredEntry] = []
        switch state.maps.entriesByAccount[HashedString(account)] {
        case .rows(let filed)?:
            let table = filed.table
            for row in filed.rows where included(table.id(at: Int(row)).kind) {
                if let stored = entries.current(row: Int(row), of: table) { found.append(stored) }
            }
        case .values(let ids)?:
            for id in ids where included(id.kind) {
                if let stored = entries[id] { found.append(stored) }
            }
        case nil: break
        }
        return found
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
