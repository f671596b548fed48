/// How entries are filed in one map of the index: which kinds, under a key of which parts, and
/// the part an entry must have to be filed there at all. A row of ``IndexMaps/table``.
struct MapFiling: Sendable {
    /// The kinds filed, one bit per `CredentialKind.creationOrder`.
    private let kinds: UInt32
    /// The parts of the key, in the order the key's type takes them (``FilingKey``).
    let parts: [FilingPart]
    /// The part an entry must have to be filed; `nil`: every entry of the kinds is filed.
    let required: FilingPart?
    /// How much of a bulk filing's room to reserve for this map: rows and keys per entry
    /// gathered, as a divisor of the entry count (0: none). Only a hint, from the shape of real
    /// caches (a few access tokens per user, one refresh token, id token and account each).
    let reserve: (rows: Int, keys: Int)

    /// A map of entries of `kinds` under `parts`.
    init(
        _ kinds: [CredentialKind], by parts: [FilingPart], requiring required: FilingPart? = nil, reserve: (rows: Int, keys: Int)
    ) {
        precondition((1...6).contains(parts.count), "a filing key has one to six parts (see SlotKey)")
        self.kinds = kinds.reduce(0) { $0 | 1 << UInt32($1.creationOrder) }
        self.parts = parts
        self.required = required
        self.reserve = reserve
    }

    /// Whether entries of `kind` are filed here (if they have the required part).
    @inline(__always)
    func files(_ kind: CredentialKind) -> Bool { kinds & 1 << UInt32(kind.creationOrder) != 0 }

    /// The key `entry` is filed under here; `nil` when it is not filed here.
    func key<Key: FilingKey>(of entry: CacheEntry) -> Key? {
        guard files(entry.kind) else { return nil }
        if let required, required.key(of: entry) == nil { return nil }
        return Key(filingParts: { parts[$0].key(of: entry) ?? parts[$0].absentKey })
    }

    /// Whether `old` and `new` are filed under the same key here (or both nowhere): what
    /// comparing their ``key(of:)`` says, part by part, without making either key.
    func filesAlike(_ old: CacheEntry, _ new: CacheEntry) -> Bool {
        let filesOld = files(old.kind) && (required.map { $0.key(of: old) != nil } ?? true)
        let filesNew = files(new.kind) && (required.map { $0.key(of: new) != nil } ?? true)
        guard filesOld, filesNew else { return filesOld == filesNew }
        return parts.allSatisfy { ($0.key(of: old) ?? $0.absentKey) == ($0.key(of: new) ?? $0.absentKey) }
    }

    /// The interned slots of the key an entry of `kind` is filed under here, whose members
    /// `decoder` interned at `slots`; `nil` when it is not filed here.
    func slotKey(kind: CredentialKind, slots: FilingSlots, decoder: borrowing EntryDecoder) -> SlotKey? {
        guard files(kind) else { return nil }
        if let required, !required.isPresent(slot: slots[required], kind: kind, decoder: decoder) { return nil }
        return SlotKey(count: parts.count) { slots[parts[$0]] }
    }

    /// The key made of the interned slots `key` holds.
    func key<Key: FilingKey>(of key: SlotKey, decoder: inout EntryDecoder) -> Key {
        Key(filingParts: { parts[$0].key(slot: key[$0], decoder: &decoder) ?? parts[$0].absentKey })
    }
}
