import HashTreeCollections

/// The index's id map: every entry of a group by its id, persistent like ``LayeredMap``.
///
/// Its base is the arrays a group's entries were decoded into, with an open-addressing table of
/// positions into them keyed by the ids' precomputed hashes: building it for 17,500 entries
/// writes one 32-bit position each instead of copying every entry and id into a dictionary
/// (three reference counts each to raise now and lower when the group is freed), and freeing it
/// walks the arrays in order. Changes since live in a persistent trie, folded into a new base
/// when they outgrow half of it.
///
/// The base never changes once built, so every copy (every index snapshot) keeps its contents.
struct EntryMap: Sendable {
    /// The entries of the base, in the arrays they were decoded into. Some may be shadowed by
    /// `changes`.
    private var chunks: [[StoredEntry]] = []
    /// Positions in `chunks` plus one (0: empty), `chunk << 27 | index`; a power of two in size.
    private var table: [UInt32] = []
    private var mask = 0
    /// Changes since the base was built: an entry, or `nil` for an id removed from the base.
    private var changes: TreeDictionary<EntryID, StoredEntry?> = [:]
    /// How many entries the base holds (shadowed ones included).
    private var baseCount = 0
    /// The number of entries.
    private(set) var count = 0

    /// Bits of a position that index into a chunk; the rest name the chunk.
    private static let indexBits = 27

    /// An empty map.
    init() {}

    /// A map of `chunks`' entries, or `nil` if two of them have the same id.
    init?(_ chunks: [[StoredEntry]]) {
        precondition(chunks.count < (1 << (32 - Self.indexBits)) - 1, "too many chunks for an entry map")
        let total = chunks.reduce(0) { $0 + $1.count }
        var size = 16
        while size < 2 * total { size <<= 1 }
        var table = [UInt32](repeating: 0, count: size)
        let mask = size - 1
        for (chunkIndex, chunk) in chunks.enumerated() {
            precondition(chunk.count < 1 << Self.indexBits, "too many entries for an entry map chunk")
            for (index, stored) in chunk.enumerated() {
                var slot = Self.slot(of: stored.id, mask: mask)
                while table[slot] != 0 {
                    if Self.entry(at: table[slot], in: chunks).id == stored.id { return nil }
                    slot = (slot + 1) & mask
                }
                table[slot] = UInt32(chunkIndex << Self.indexBits | index) + 1
            }
        }
        self.chunks = chunks
        self.table = table
        self.mask = mask
        baseCount = total
        count = total
    }

    /// Whether the map has no entry.
    var isEmpty: Bool { count == 0 }

    /// The entry filed under `id`.
    subscript(id: EntryID) -> StoredEntry? {
        if !changes.isEmpty, let changed = changes[id] { return changed }
        return baseEntry(id)
    }

    /// Files `stored` under `id`; returns the entry it replaced.
    @discardableResult
    mutating func updateValue(_ stored: StoredEntry, forKey id: EntryID) -> StoredEntry? {
        let replaced: StoredEntry?
        if let changed = changes.updateValue(stored, forKey: id) { replaced = changed } else { replaced = baseEntry(id) }
        if replaced == nil { count += 1 }
        foldIfLarge()
        return replaced
    }

    /// Removes the entry filed under `id`; returns it.
    @discardableResult
    mutating func removeValue(forKey id: EntryID) -> StoredEntry? {
        let removed: StoredEntry?
        if let original = baseEntry(id) {
            if let changed = changes.updateValue(nil, forKey: id) { removed = changed } else { removed = original }
        } else {
            removed = changes.removeValue(forKey: id) ?? nil
        }
        if removed != nil { count -= 1 }
        foldIfLarge()
        return removed
    }

    /// Calls `body` with every entry, in no particular order.
    func forEach(_ body: (StoredEntry) throws -> Void) rethrows {
        for chunk in chunks {
            for stored in chunk where changes.isEmpty || changes[stored.id] == nil { try body(stored) }
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

    private func baseEntry(_ id: EntryID) -> StoredEntry? {
        guard !table.isEmpty else { return nil }
        var slot = Self.slot(of: id, mask: mask)
        while true {
            let position = table[slot]
            if position == 0 { return nil }
            let stored = Self.entry(at: position, in: chunks)
            if stored.id == id { return stored }
            slot = (slot + 1) & mask
        }
    }

    private mutating func foldIfLarge() {
        guard changes.count >= 64, changes.count > baseCount / 2 else { return }
        // Ids are unique here, so the new base always builds.
        self = EntryMap([values]) ?? self
    }

    /// The table slot to start probing at: the id's key hash (already computed) and kind,
    /// mixed so the low bits the mask keeps depend on all of them.
    private static func slot(of id: EntryID, mask: Int) -> Int {
        let hash = (UInt64(bitPattern: Int64(id.keyHash)) ^ UInt64(id.kind.creationOrder)) &* 0x9e37_79b9_7f4a_7c15
        return Int(truncatingIfNeeded: hash >> 32) & mask
    }

    private static func entry(at position: UInt32, in chunks: [[StoredEntry]]) -> StoredEntry {
        let packed = Int(position - 1)
        return chunks[packed >> indexBits][packed & ((1 << indexBits) - 1)]
    }
}
