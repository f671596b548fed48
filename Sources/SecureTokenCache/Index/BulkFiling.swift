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
    /// The rows under the keys of each map.
    var maps: IndexGroupings<AccessTokenBucket, RefreshTokenBucket, HashedString>

    /// An empty filing with room for `capacity` entries (see ``IndexGroupings/init(capacity:)``).
    init(capacity: Int = 0) {
        rows = GatheredRows(capacity: capacity)
        maps = IndexGroupings(capacity: capacity)
    }

    /// A filing of `rows`, gathered under `maps`.
    init(rows: GatheredRows, maps: IndexGroupings<AccessTokenBucket, RefreshTokenBucket, HashedString>) {
        self.rows = rows
        self.maps = maps
    }

    /// The number of entries gathered.
    var count: Int { rows.count }

    /// Gathers `row`, filed under `keys`.
    mutating func add(_ row: consuming EntryTable.Row, keys: borrowing FilingKeys) {
        let position = rows.add(row)
        switch keys {
        case .accessToken(let bucket, _):
            maps.accessTokens.add(position, to: bucket)
        case .refreshToken(let account, let environment, let client, let family):
            let account = account ?? .empty
            maps.ownRefreshTokens.add(position, to: RefreshTokenBucket(account: account, environment: environment, owner: client))
            if let family {
                maps.familyRefreshTokens.add(
                    position, to: RefreshTokenBucket(account: account, environment: environment, owner: family))
            }
        case .idToken:
            break
        case .account(let home, let username):
            maps.accountsByHome.add(position, to: home)
            if let username { maps.accountsByUsername.add(position, to: username) }
        case .appMetadata(let client):
            maps.appMetadataByClient.add(position, to: client)
        }
        if let account = keys.homeAccount { maps.entriesByAccount.add(position, to: account) }
    }

    /// Gathers a typed entry.
    mutating func add(_ stored: StoredEntry) {
        add(EntryTable.Row(id: stored.id, ordinal: stored.ordinal, source: .entry(stored.entry)), keys: FilingKeys(stored.entry))
    }

    /// Gathers every entry of `other` after those already here, in its order.
    mutating func append(_ other: consuming BulkFiling) {
        maps.append(other.maps, offset: count)
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
