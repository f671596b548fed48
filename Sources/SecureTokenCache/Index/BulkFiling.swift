/// Entries gathered for filing into an empty index at once (``Index/fileAll(_:)``): opening a
/// group, a reload, an import into a new group.
///
/// Each entry becomes a row of the index's ``EntryTable`` and is gathered under its
/// ``FilingKeys`` in one ``Grouping`` per map. A large group is gathered by several threads, each
/// decoding and gathering a contiguous part of the records (see ``SlotFiling``); the parts are
/// then joined in order (``append(_:)``), which costs per distinct key, not per entry.
struct BulkFiling: Sendable {
    /// The rows, in order, and what the index counts of them.
    var rows: GatheredRows
    var accessTokens: Grouping<AccessTokenBucket>
    var ownRefreshTokens: Grouping<RefreshTokenBucket>
    var familyRefreshTokens: Grouping<RefreshTokenBucket>
    var accountsByHome: Grouping<HashedString>
    var accountsByUsername: Grouping<HashedString>
    var appMetadataByClient: Grouping<HashedString>
    var entriesByAccount: Grouping<HashedString>

    /// An empty filing with room for `capacity` entries of a cache shaped like real ones (a few
    /// access tokens per user, and one refresh token, id token and account each), so that its
    /// tables never grow while filling.
    init(capacity: Int = 0) {
        rows = GatheredRows(capacity: capacity)
        accessTokens = Grouping(rows: capacity, keys: capacity / 2)
        ownRefreshTokens = Grouping(rows: capacity / 6, keys: capacity / 6)
        familyRefreshTokens = Grouping(rows: capacity / 6, keys: capacity / 6)
        accountsByHome = Grouping(rows: capacity / 6, keys: capacity / 6)
        accountsByUsername = Grouping(rows: capacity / 6, keys: capacity / 6)
        appMetadataByClient = Grouping()
        entriesByAccount = Grouping(rows: capacity, keys: capacity / 6)
    }

    /// A filing of `rows`, gathered under these keys.
    init(
        rows: GatheredRows, accessTokens: Grouping<AccessTokenBucket>, ownRefreshTokens: Grouping<RefreshTokenBucket>,
        familyRefreshTokens: Grouping<RefreshTokenBucket>, accountsByHome: Grouping<HashedString>,
        accountsByUsername: Grouping<HashedString>, appMetadataByClient: Grouping<HashedString>,
        entriesByAccount: Grouping<HashedString>
    ) {
        self.rows = rows
        self.accessTokens = accessTokens
        self.ownRefreshTokens = ownRefreshTokens
        self.familyRefreshTokens = familyRefreshTokens
        self.accountsByHome = accountsByHome
        self.accountsByUsername = accountsByUsername
        self.appMetadataByClient = appMetadataByClient
        self.entriesByAccount = entriesByAccount
    }

    /// The number of entries gathered.
    var count: Int { rows.count }

    /// Gathers `row`, filed under `keys`.
    mutating func add(_ row: consuming EntryTable.Row, keys: borrowing FilingKeys) {
        let position = rows.add(row)
        switch keys {
        case .accessToken(let bucket, _):
            accessTokens.add(position, to: bucket)
        case .refreshToken(let account, let environment, let client, let family):
            let account = account ?? .empty
            ownRefreshTokens.add(position, to: RefreshTokenBucket(account: account, environment: environment, owner: client))
            if let family {
                familyRefreshTokens.add(
                    position, to: RefreshTokenBucket(account: account, environment: environment, owner: family))
            }
        case .idToken:
            break
        case .account(let home, let username):
            accountsByHome.add(position, to: home)
            if let username { accountsByUsername.add(position, to: username) }
        case .appMetadata(let client):
            appMetadataByClient.add(position, to: client)
        }
        if let account = keys.homeAccount { entriesByAccount.add(position, to: account) }
    }

    /// Gathers a typed entry.
    mutating func add(_ stored: StoredEntry) {
        add(EntryTable.Row(id: stored.id, ordinal: stored.ordinal, source: .entry(stored.entry)), keys: FilingKeys(stored.entry))
    }

    /// Gathers every entry of `other` after those already here, in its order.
    mutating func append(_ other: consuming BulkFiling) {
        let offset = count
        accessTokens.append(other.accessTokens, offset: offset)
        ownRefreshTokens.append(other.ownRefreshTokens, offset: offset)
        familyRefreshTokens.append(other.familyRefreshTokens, offset: offset)
        accountsByHome.append(other.accountsByHome, offset: offset)
        accountsByUsername.append(other.accountsByUsername, offset: offset)
        appMetadataByClient.append(other.appMetadataByClient, offset: offset)
        entriesByAccount.append(other.entriesByAccount, offset: offset)
        rows.append(other.rows)
    }
}

/// The rows of a bulk filing, in order, with what the index counts of them.
struct GatheredRows: Sendable {
    /// The rows, in order: one chunk per part joined (see ``EntryTable/init(chunks:)``).
    private(set) var chunks: [[EntryTable.Row]] = [[]]
    /// The number of rows.
    private(set) var count = 0
    /// How many rows of each kind, by `CredentialKind.creationOrder`.
    private(set) var countByKind = [Int](repeating: 0, count: CredentialKind.allCases.count)
    /// The smallest ordinal of each kind (`.max`: none), by `CredentialKind.creationOrder`.
    private(set) var firstOrdinalOfKind = [UInt64](repeating: .max, count: CredentialKind.allCases.count)
    /// One more than the largest ordinal gathered.
    private(set) var nextOrdinal: UInt64 = 0

    /// No rows yet, with room for `capacity`.
    init(capacity: Int = 0) {
        chunks[0].reserveCapacity(capacity)
    }

    /// Adds `row`; returns its position.
    mutating func add(_ row: consuming EntryTable.Row) -> Int {
        let kind = row.id.kind.creationOrder
        countByKind[kind] += 1
        firstOrdinalOfKind[kind] = min(firstOrdinalOfKind[kind], row.ordinal)
        nextOrdinal = max(nextOrdinal, row.ordinal + 1)
        chunks[chunks.count - 1].append(row)
        count += 1
        return count - 1
    }

    /// The rows, taken out (what is left has none), so that they can be moved rather than copied.
    mutating func takeChunks() -> [[EntryTable.Row]] {
        defer { chunks = [] }
        return chunks
    }

    /// Adds the rows of `other` after these.
    mutating func append(_ other: consuming GatheredRows) {
        for kind in countByKind.indices {
            countByKind[kind] += other.countByKind[kind]
            firstOrdinalOfKind[kind] = min(firstOrdinalOfKind[kind], other.firstOrdinalOfKind[kind])
        }
        nextOrdinal = max(nextOrdinal, other.nextOrdinal)
        chunks += other.chunks
        count += other.count
    }
}
