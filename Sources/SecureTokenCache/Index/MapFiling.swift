/// How entries are filed in one map of the index: which kinds, under a key of which parts, and
/// the part an entry must have to be filed there at all. A row of ``IndexMaps/table``.
struct MapFiling: Sendable {
    /// The kinds filed, one bit per `CredentialKind.creationOrder`.
    private let kinds: UInt32
    /// The parts of the key, in the order the key's type takes them (``FilingKey``): the first
    /// `partCount`. Held inline, not in an array, so that a filing read once per entry and map
    /// while a group is decoded on several threads retains no shared object.
    private let parts: InlineArray<6, FilingPart>
    /// How many of `parts` the key has.
    private let partCount: Int
    /// The part an entry must have to be filed; `nil`: every entry of the kinds is filed.
    let required: FilingPart?
    /// The part an entry must not have to be filed (it is filed in another map); `nil`: none.
    let excluded: FilingPart?
    /// How much of a bulk filing's room to reserve for this map: rows and keys per entry
    /// gathered, as a divisor of the entry count (0: none). Only a hint, from the shape of real
    /// caches (a few access tokens per user, one refresh token, id token and account each).
    let reserve: (rows: Int, keys: Int)

    /// A map of entries of `kinds` under `parts`.
    init(
        _ kinds: [CredentialKind], by parts: [FilingPart], requiring required: FilingPart? = nil,
        excluding excluded: FilingPart? = nil, reserve: (rows: Int, keys: Int)
    ) {
        precondition((1...6).contains(parts.count), "a filing key has one to six parts (see SlotKey)")
        self.kinds = kinds.reduce(0) { $0 | 1 << UInt32($1.creationOrder) }
        var inline = InlineArray<6, FilingPart>(repeating: .account)
        for (number, part) in parts.enumerated() { inline[number] = part }
        self.parts = inline
        partCount = parts.count
        self.required = required
        self.excluded = excluded
        self.reserve = reserve
    }

    /// Whether a typed entry of a kind filed here has what filing it here takes.
    private func admits(_ entry: CacheEntry) -> Bool {
        (required.map { $0.key(of: entry) != nil } ?? true) && (excluded.map { $0.key(of: entry) == nil } ?? true)
    }

    /// Whether entries of `kind` are filed here (if they have the required part).
    @inline(__always)
    func files(_ kind: CredentialKind) -> Bool { kinds & 1 << UInt32(kind.creationOrder) != 0 }

    /// The key `entry` is filed under here; `nil` when it is not filed here.
    func key<Key: FilingKey>(of entry: CacheEntry) -> Key? {
        guard files(entry.kind), admits(entry) else { return nil }
        return Key(filingParts: { parts[$0].key(of: entry) ?? parts[$0].absentKey })
    }

    /// Whether `old` and `new` are filed under the same key here (or both nowhere): what
    /// comparing their ``key(of:)`` says, part by part, without making either key.
    func filesAlike(_ old: CacheEntry, _ new: CacheEntry) -> Bool {
        let filesOld = files(old.kind) && admits(old)
        let filesNew = files(new.kind) && admits(new)
        guard filesOld, filesNew else { return filesOld == filesNew }
        return (0..<partCount).allSatisfy { number in
            let part = parts[number]
            return (part.key(of: old) ?? part.absentKey) == (part.key(of: new) ?? part.absentKey)
        }
    }

    /// The interned slots of the key an entry of `kind` is filed under here, whose members
    /// `decoder` interned at `slots`; `nil` when it is not filed here.
    func slotKey(kind: CredentialKind, slots: FilingSlots, decoder: borrowing EntryDecoder) -> SlotKey? {
        guard files(kind) else { return nil }
        if let required, !required.isPresent(slot: slots[required], kind: kind, decoder: decoder) { return nil }
        if let excluded, excluded.isPresent(slot: slots[excluded], kind: kind, decoder: decoder) { return nil }
        return SlotKey(count: partCount) { slots[parts[$0]] }
    }

    /// The key made of the interned slots `key` holds.
    func key<Key: FilingKey>(of key: SlotKey, decoder: inout EntryDecoder) -> Key {
        Key(filingParts: { parts[$0].key(slot: key[$0], decoder: &decoder) ?? parts[$0].absentKey })
    }
}
