import HashTreeCollections

/// The index's id map: every entry of a group by its id, persistent like ``LayeredMap``.
///
/// Its base is the ``EntryTable`` the index was built from, with an open-addressing table of row
/// numbers keyed by the ids' precomputed hashes: building it for 17,500 entries writes one 32-bit
/// number each instead of copying every entry and id into a dictionary (three reference counts
/// each to raise now and lower when the group is freed), and no entry is made into a typed one
/// until it is asked for. Changes since live in a persistent trie, folded into a new base when
/// they outgrow half of it.
///
/// The base never changes once built, so every copy (every index snapshot) keeps its contents.
struct EntryMap: Sendable {
    /// The entries of the base. Some may be shadowed by `changes`.
    private var base = EntryTable.empty
    /// Row numbers in `base` plus one (0: empty); a power of two in size.
    private var table: [UInt32] = []
    private var mask = 0
    /// Changes since the base was built: an entry, or `nil` for an id removed from the base.
    private var changes: TreeDictionary<EntryID, StoredEntry?> = [:]
    /// The number of entries.
    private(set) var count = 0

    /// An empty map.
    init() {}

    /// A map of the entries of `base`, or `nil` if two of them have the same id.
    init?(_ base: EntryTable) {
        precondition(base.count < Int(UInt32.max), "too many entries for an entry map")
        var size = 16
        while size < 2 * base.count { size <<= 1 }
        var table = [UInt32](repeating: 0, count: size)
        let mask = size - 1
        for row in base.rows.indices {
            // Only the hash and kind are read; ids are compared (strings and all) only when two
            // land in one slot.
            var slot = Self.slot(kind: base.rows[row].id.kind, keyHash: base.rows[row].id.keyHash, mask: mask)
            while table[slot] != 0 {
                if base.rows[Int(table[slot] - 1)].id == base.rows[row].id { return nil }
                slot = (slot + 1) & mask
            }
            table[slot] = UInt32(row + 1)
        }
        self.base = base
        self.table = table
        self.mask = mask
        count = base.count
    }

    /// A map of `entries`, or `nil` if two of them have the same id.
    init?(_ entries: [StoredEntry]) {
        self.init(EntryTable(rows: entries.map { EntryTable.Row(id: $0.id, ordinal: $0.ordinal, source: .entry($0.entry)) }))
    }

    /// Whether the map has no entry.
    var isEmpty: Bool { count == 0 }

    /// The entry filed under `id`.
    subscript(id: EntryID) -> StoredEntry? {
        if !changes.isEmpty, let changed = changes[id] { return changed }
        return baseRow(of: id).map(base.stored(at:))
    }

    /// The entry filed now under the id of `row` of `rows` (a table some index map files rows
    /// of): when that is the base, found without hashing the id unless something changed.
    func current(row: Int, of rows: EntryTable) -> StoredEntry? {
        guard rows === base else { return self[rows.id(at: row)] }
        if !changes.isEmpty, let changed = changes[base.id(at: row)] { return changed }
        return base.stored(at: row)
    }

    /// Files `stored` under `id`; returns the entry it replaced.
    @discardableResult
    mutating func updateValue(_ stored: StoredEntry, forKey id: EntryID) -> StoredEntry? {
        let replaced: StoredEntry?
        if let changed = changes.updateValue(stored, forKey: id) {
            replaced = changed
        } else {
            replaced = baseRow(of: id).map(base.stored(at:))
        }
        if replaced == nil { count += 1 }
        foldIfLarge()
        return replaced
    }

    /// Removes the entry filed under `id`; returns it.
    @discardableResult
    mutating func removeValue(forKey id: EntryID) -> StoredEntry? {
        let removed: StoredEntry?
        if let row = baseRow(of: id) {
            if let changed = changes.updateValue(nil, forKey: id) { removed = changed } else { removed = base.stored(at: row) }
        } else {
            removed = changes.removeValue(forKey: id) ?? nil
        }
        if removed != nil { count -= 1 }
        foldIfLarge()
        return removed
    }

    /// Calls `body` with every entry, in no particular order.
    func forEach(_ body: (StoredEntry) throws -> Void) rethrows {
        for row in 0..<base.count where changes.isEmpty || changes[base.id(at: row)] == nil {
            try body(base.stored(at: row))
        }
        for (_, changed) in changes { if let changed { try body(changed) } }
    }

    /// Every entry, in no particular order.
    var values: [StoredEntry] {
        var values: [StoredEntry] = []
        values.reserveCapacity(count)
        forEach { values.append($0) }
        return values
    }

    private func baseRow(of id: EntryID) -> Int? {
        guard !table.isEmpty else { return nil }
        var slot = Self.slot(of: id, mask: mask)
        while true {
            let filed = table[slot]
            if filed == 0 { return nil }
            if base.id(at: Int(filed - 1)) == id { return Int(filed - 1) }
            slot = (slot + 1) & mask
        }
    }

    private mutating func foldIfLarge() {
        guard changes.count >= 64, changes.count > base.count / 2 else { return }
        // The base's rows that nothing shadows stay as they are (a payload not yet decoded stays
        // a payload); the changes join them typed. Ids are unique here, so the new base builds.
        var rows: [EntryTable.Row] = []
        rows.reserveCapacity(count)
        for filed in base.rows where changes[filed.id] == nil { rows.append(filed) }
        for (id, changed) in changes {
            if let changed { rows.append(EntryTable.Row(id: id, ordinal: changed.ordinal, source: .entry(changed.entry))) }
        }
        self = EntryMap(EntryTable(rows: rows)) ?? self
    }

    /// The table slot to start probing at: the id's key hash (already computed) and kind,
    /// mixed so the low bits the mask keeps depend on all of them.
    private static func slot(of id: EntryID, mask: Int) -> Int { slot(kind: id.kind, keyHash: id.keyHash, mask: mask) }

    private static func slot(kind: CredentialKind, keyHash: Int, mask: Int) -> Int {
        let hash = (UInt64(bitPattern: Int64(keyHash)) ^ UInt64(kind.creationOrder)) &* 0x9e37_79b9_7f4a_7c15
        return Int(truncatingIfNeeded: hash >> 32) & mask
    }
}
