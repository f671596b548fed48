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
