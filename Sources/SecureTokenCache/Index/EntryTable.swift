import Atomics

/// The entries an index was built from in one go (opening a group, a reload, an import into a new
/// group): each entry's id, ordinal and record payload, made into a typed ``CacheEntry`` only
/// when something first asks for it.
///
/// Filing a group's entries needs only the keys they are filed under (``FilingPart``), which the
/// decoder reads without making a typed entry. Making every typed entry, with its strings and
/// parsed members, and freeing it again when the group closes, would cost more than everything
/// else an open does; most are never read by a process that opened the group to get a token.
///
/// Payloads are checked in full when the table is built (``EntryDecoder/filingSlots(payload:)``),
/// so making an entry later cannot fail. Rows never change; a row's typed entry is made at most
/// once per table and published atomically, so any number of threads may read a table at once.
final class EntryTable: @unchecked Sendable {
    /// One entry of the table.
    struct Row: Sendable {
        /// The entry's id.
        let id: EntryID
        /// What the typed entry is made from, and the ordinal of one already typed: a payload
        /// holds its own, and a large group has a row per entry.
        private let held: Held

        private enum Held: Sendable {
            case payload(PayloadBytes)
            case entry(CacheEntry, ordinal: UInt64)
        }

        /// The row of the entry `id` whose ordinal is `ordinal`, made from `source` (a payload
        /// holds that ordinal).
        init(id: EntryID, ordinal: UInt64, source: Source) {
            self.id = id
            switch source {
            case .payload(let payload):
                assert(
                    payload.isEmpty || EntryPayload.ordinal(of: payload.slice) == ordinal, "a payload holds its entry's ordinal")
                held = .payload(payload)
            case .entry(let entry):
                held = .entry(entry, ordinal: ordinal)
            }
        }

        /// The entry's ordinal.
        var ordinal: UInt64 { ordinalAndPayloadBytes.ordinal }

        /// The entry's ordinal and the size of its payload (0 for a typed entry), read where the
        /// row is: a walk over every row then touches no key and retains no payload.
        var ordinalAndPayloadBytes: (ordinal: UInt64, payloadBytes: Int) {
            switch held {
            case .payload(let payload): (payload.withUnsafeBytes(EntryPayload.ordinal(in:)) ?? 0, payload.count)
            case .entry(_, let ordinal): (ordinal, 0)
            }
        }

        /// What the typed entry is made from.
        var source: Source {
            switch held {
            case .payload(let payload): .payload(payload)
            case .entry(let entry, _): .entry(entry)
            }
        }
    }

    /// Where a row's typed entry comes from.
    enum Source: Sendable {
        /// A checked record payload (``EntryPayload``), decoded when first asked for.
        case payload(PayloadBytes)
        /// The typed entry itself (an import, or an entry already made).
        case entry(CacheEntry)
    }

    /// A typed entry made from a payload, published once.
    private final class Made: Sendable {
        let entry: CacheEntry
        init(_ entry: CacheEntry) { self.entry = entry }
    }

    /// The rows, in the order they were filed.
    let rows: [Row]
    /// One cell per row for its typed entry made from a payload (`Storage` must not move once an
    /// atomic reference points at it, hence memory of its own).
    private let made: UnsafeMutablePointer<UnsafeAtomicLazyReference<Made>.Storage>

    /// A table of `rows`.
    init(rows: [Row]) {
        self.rows = rows
        made = .allocate(capacity: max(1, rows.count))
        made.initialize(repeating: UnsafeAtomicLazyReference<Made>.Storage(), count: rows.count)
    }

    /// A table of the rows of `chunks`, in order, moved rather than copied: a copy would retain
    /// (and freeing the chunks release) an id and a payload per row, on a processor that did not
    /// make them.
    convenience init(chunks: consuming [[Row]]) {
        guard chunks.count > 1 else {
            self.init(rows: chunks.first ?? [])
            return
        }
        let total = chunks.reduce(0) { $0 + $1.count }
        let placeholder = Row(id: EntryID(kind: .accessToken, key: ""), ordinal: 0, source: .payload(PayloadBytes([])))
        let rows = [Row](unsafeUninitializedCapacity: total) { buffer, initialized in
            for index in chunks.indices {
                chunks[index].withUnsafeMutableBufferPointer { chunk in
                    guard let source = chunk.baseAddress else { return }
                    (buffer.baseAddress! + initialized).moveInitialize(from: source, count: chunk.count)
                    initialized += chunk.count
                    // The moved-from slots get a row that owns nothing, so the chunk stays valid.
                    source.initialize(repeating: placeholder, count: chunk.count)
                }
            }
        }
        self.init(rows: rows)
    }

    deinit {
        for row in 0..<rows.count { made[row].dispose() }
        made.deinitialize(count: rows.count)
        made.deallocate()
    }

    /// An empty table.
    static let empty = EntryTable(rows: [])

    /// The number of rows.
    var count: Int { rows.count }

    /// The id of the entry in `row`.
    func id(at row: Int) -> EntryID { rows[row].id }

    /// The typed entry in `row`, made from its payload the first time it is asked for.
    func entry(at row: Int) -> CacheEntry {
        switch rows[row].source {
        case .entry(let entry):
            return entry
        case .payload(let payload):
            let cell = UnsafeAtomicLazyReference(at: made + row)
            if let made = cell.load() { return made.entry }
            // Two threads may both decode; the first to publish wins and the other's is dropped.
            return cell.storeIfNilThenLoad(Made(Self.decode(rows[row].id.kind, payload.slice))).entry
        }
    }

    /// The members of the entry in `row` as held: its payload, never decoded here.
    func members(at row: Int) -> EntryMembers {
        switch rows[row].source {
        case .payload(let payload): .payload(payload.slice)
        case .entry(let entry): entry.members
        }
    }

    /// The entry in `row`, typed.
    func stored(at row: Int) -> StoredEntry {
        let filed = rows[row]
        return StoredEntry(id: filed.id, ordinal: filed.ordinal, entry: entry(at: row))
    }

    private static func decode(_ kind: CredentialKind, _ payload: ArraySlice<UInt8>) -> CacheEntry {
        do {
            var decoder = EntryDecoder(sharing: false)
            return try decoder.decode(kind: kind, payload: payload).entry
        } catch {
            // The table was built from this payload only after it checked in full.
            preconditionFailure("an entry payload that was checked no longer decodes")
        }
    }
}
