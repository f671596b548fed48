import HashTreeCollections

/// The index's id map: every entry of a group by its id, persistent like ``LayeredMap``.
///
/// Its base is the ``EntryTable`` the index was built from, with a ``NumberTable`` of row numbers
/// keyed by the ids' precomputed hashes: building it writes one 32-bit number per entry instead
/// of copying every entry and id into a dictionary (three reference counts each to raise now and
/// lower when the group is freed), and no entry is made into a typed one until it is asked for.
/// Changes since live in a persistent trie, folded into a new base when they outgrow half of it.
///
/// The base never changes once built, so every copy (every index snapshot) keeps its contents.
struct EntryMap: Sendable {
    /// The entries of the base. Some may be shadowed by `changes`.
    private var base = EntryTable.empty
    /// The base's row numbers by id.
    private var rowNumbers = NumberTable()
    /// Changes since the base was built.
    private var changes = ChangeLayer<EntryID, StoredEntry>(baseCount: 0)

    /// An empty map.
    init() {}

    /// A map of the entries of `base`, or `nil` if two of them have the same id.
    init?(_ base: EntryTable) {
        var rowNumbers = NumberTable(capacity: base.count)
        for row in base.rows.indices {
            // Ids are compared (strings and all) only where hashes and kinds agree.
            let id = base.rows[row].id
            let hash = Self.hash(of: id)
            if rowNumbers.first(hash: hash, where: { base.rows[$0].id == id }) != nil { return nil }
            rowNumbers.file(row, hash: hash)
        }
        self.base = base
        self.rowNumbers = rowNumbers
        changes = ChangeLayer(baseCount: base.count)
    }

    /// A map of `entries`, or `nil` if two of them have the same id.
    init?(_ entries: [StoredEntry]) {
        self.init(EntryTable(rows: entries.map { EntryTable.Row(id: $0.id, ordinal: $0.ordinal, source: .entry($0.entry)) }))
    }

    /// The number of entries.
    var count: Int { changes.count }

    /// Whether the map has no entry.
    var isEmpty: Bool { count == 0 }

    /// The entry filed under `id`.
    subscript(id: EntryID) -> StoredEntry? {
        if let changed = changes[id] { return changed }
        return baseRow(of: id).map(base.stored(at:))
    }

    /// The entry filed now under the id of `row` of `rows` (a table some index map files rows
    /// of): when that is the base, found without hashing the id unless something changed.
    func current(row: Int, of rows: EntryTable) -> StoredEntry? {
        guard rows === base else { return self[rows.id(at: row)] }
        if !changes.isEmpty, let changed = changes[base.id(at: row)] { return changed }
        return base.stored(at: row)
    }

    /// The ordinal of the entry filed under `id`, found without making the entry a typed one.
    func ordinal(of id: EntryID) -> UInt64? {
        if let changed = changes[id] { return changed?.ordinal }
        return baseRow(of: id).map { base.rows[$0].ordinal }
    }

    /// Files `stored` under `id`; returns the entry it replaced.
    @discardableResult
    mutating func updateValue(_ stored: StoredEntry, forKey id: EntryID) -> StoredEntry? {
        defer { foldIfLarge() }
        let replaced = changes.set(stored, forKey: id) ?? baseRow(of: id).map(base.stored(at:))
        return changes.counting(replaced, added: true)
    }

    /// Removes the entry filed under `id`; returns it.
    @discardableResult
    mutating func removeValue(forKey id: EntryID) -> StoredEntry? {
        defer { foldIfLarge() }
        let row = baseRow(of: id)
        let removed = changes.remove(id, inBase: row != nil) ?? row.map(base.stored(at:))
        return changes.counting(removed, added: false)
    }

    /// Calls `body` with every entry, in no particular order.
    func forEach(_ body: (StoredEntry) throws -> Void) rethrows {
        for row in 0..<base.count where changes.isEmpty || changes[base.id(at: row)] == nil {
            try body(base.stored(at: row))
        }
        try changes.forEach { _, changed in if let changed { try body(changed) } }
    }

    /// Calls `body` with every entry's kind and members as held, in no particular order: for
    /// reading every entry's members (counting them) without making each a typed entry. Rows are
    /// read where they are, as ``heldInOrder()`` reads them.
    func forEachHeld(_ body: (CredentialKind, EntryMembers) throws -> Void) rethrows {
        try base.rows.withUnsafeBufferPointer { rows in
            for row in rows.indices where changes.isEmpty || changes[rows[row].id] == nil {
                try body(rows[row].id.kind, base.members(at: row))
            }
        }
        try changes.forEach { id, changed in if let changed { try body(id.kind, changed.entry.members) } }
    }

    /// Where every entry is held, by kind, each kind's in ordinal order (``held(_:)`` reads
    /// each), and the bytes of the payloads held: for walking a large group in document order
    /// (an export) without first copying every key and payload reference into a list.
    func heldInOrder() -> (places: [CredentialKind: [HeldPlace]], payloadBytes: Int) {
        // By kind in an array, not a dictionary: a large group hashes no kind per entry. Each row
        // is read where it is, not copied: a copy would retain its key, one object per entry
        // spread over the heap, and its payload.
        let kinds = CredentialKind.allCases.sorted()
        var byKind = [[(ordinal: UInt64, place: HeldPlace)]](repeating: [], count: kinds.count)
        var payloadBytes = 0
        base.rows.withUnsafeBufferPointer { rows in
            for row in rows.indices where changes.isEmpty || changes[rows[row].id] == nil {
                let (ordinal, bytes) = rows[row].ordinalAndPayloadBytes
                byKind[rows[row].id.kind.creationOrder].append((ordinal, .base(Int32(row))))
                payloadBytes += bytes
            }
        }
        changes.forEach { _, changed in
            if let changed { byKind[changed.id.kind.creationOrder].append((changed.ordinal, .changed(changed))) }
        }
        var places: [CredentialKind: [HeldPlace]] = [:]
        for (kind, held) in zip(kinds, byKind) where !held.isEmpty {
            places[kind] = held.sorted { $0.ordinal < $1.ordinal }.map(\.place)
        }
        return (places, payloadBytes)
    }

    /// Every entry as the record a store holds it as, in ordinal order (then id order, for the
    /// entries that instances each holding part of a group gave one ordinal): for filing the
    /// entries again with others in one pass (a large import into a group that holds entries). A
    /// payload the base holds is shared, not copied, and no entry is made into a typed one.
    func recordsInOrder() -> [(id: EntryID, record: Record)] {
        var held: [(ordinal: UInt64, id: EntryID, record: Record)] = []
        held.reserveCapacity(count)
        for row in 0..<base.count where changes.isEmpty || changes[base.id(at: row)] == nil {
            let filed = base.rows[row]
            switch filed.source {
            case .payload(let payload):
                held.append((filed.ordinal, filed.id, Record(id: RecordCodec.recordID(filed.id), bytes: payload)))
            case .entry(let entry):
                let stored = StoredEntry(id: filed.id, ordinal: filed.ordinal, entry: entry)
                held.append((filed.ordinal, filed.id, RecordCodec.record(stored)))
            }
        }
        changes.forEach { _, changed in
            if let changed { held.append((changed.ordinal, changed.id, RecordCodec.record(changed))) }
        }
        held.sort { $0.ordinal != $1.ordinal ? $0.ordinal < $1.ordinal : $0.id < $1.id }
        return held.map { ($0.id, $0.record) }
    }

    /// Where ``heldInOrder()`` found an entry: a row of the base, or a change since.
    enum HeldPlace {
        case base(Int32)
        case changed(StoredEntry)
    }

    /// The id and members as held of the entry at `place`.
    func held(_ place: HeldPlace) -> (id: EntryID, members: EntryMembers) {
        switch place {
        case .base(let row): (base.id(at: Int(row)), base.members(at: Int(row)))
        case .changed(let changed): (changed.id, changed.entry.members)
        }
    }

    /// Every entry, in no particular order.
    var values: [StoredEntry] {
        var values: [StoredEntry] = []
        values.reserveCapacity(count)
        forEach { values.append($0) }
        return values
    }

    private func baseRow(of id: EntryID) -> Int? {
        rowNumbers.first(hash: Self.hash(of: id)) { base.id(at: $0) == id }
    }

    private mutating func foldIfLarge() {
        guard changes.outgrows(base: base.count) else { return }
        // The base's rows that nothing shadows stay as they are (a payload not yet decoded stays
        // a payload); the changes join them typed. Ids are unique here, so the new base builds.
        var rows: [EntryTable.Row] = []
        rows.reserveCapacity(count)
        for filed in base.rows where changes[filed.id] == nil { rows.append(filed) }
        changes.forEach { id, changed in
            if let changed { rows.append(EntryTable.Row(id: id, ordinal: changed.ordinal, source: .entry(changed.entry))) }
        }
        self = EntryMap(EntryTable(rows: rows)) ?? self
    }

    /// The hash an id is filed under: its key's (already computed) with its kind.
    private static func hash(of id: EntryID) -> Int {
        HashMixer.combine(id.keyHash, id.kind.creationOrder)
    }
}
