/// A row of ``IndexMaps/table``: a map of ``IndexMaps``, how entries are filed in it, and the
/// map that counts, if any, how many refresh tokens each owner has for each account.
///
/// Every way of filing an entry derives from this: one at a time (``file(_:adding:in:)``) and
/// in bulk (``converted(_:decoder:)``, ``install(_:rows:in:)``), so adding a map is adding a row.
struct MapRule<Key: FilingKey, Value: FiledValue>: Sendable {
    /// An owner (client or family) → account → count map, and how a key names its owner and
    /// account.
    typealias Tally = (
        map: any WritableKeyPath<IndexMaps, IndexMaps.Tally> & Sendable,
        owner: @Sendable (Key) -> (owner: HashedString, account: HashedString)
    )

    /// The map.
    let map: any WritableKeyPath<IndexMaps, LayeredMap<Key, Filed<Value>>> & Sendable
    /// How entries are filed in it.
    let filing: MapFiling
    /// The map counting its keys by owner and account.
    let tally: Tally?

    /// The rule filing entries in `map` as `filing` says, counted in `tally`.
    init(
        _ map: any WritableKeyPath<IndexMaps, LayeredMap<Key, Filed<Value>>> & Sendable, _ filing: MapFiling, tally: Tally? = nil
    ) {
        self.map = map
        self.filing = filing
        self.tally = tally
    }

    /// Files `stored` under its key, or takes it out unless `adding`, and counts it in the tally.
    func file(_ stored: StoredEntry, adding: Bool, in maps: inout IndexMaps) {
        guard let key: Key = filing.key(of: stored.entry) else { return }
        Self.change(&maps[keyPath: map], key) { values in
            if adding {
                values.append(Value(filing: stored))
            } else if let position = values.firstIndex(where: { $0.filedID == stored.id }) {
                values.remove(at: position)
            }
        }
        guard let tally else { return }
        let (owner, account) = tally.owner(key)
        // In place: one owner's counts cover every account it has a token for, and a copy of
        // them for each token filed would copy the path to each account in their trie.
        maps[keyPath: tally.map].modifyValue(forKey: owner) { held in
            var counts = held.take() ?? LayeredMap()
            let next = (counts[account] ?? 0) + (adding ? 1 : -1)
            counts[account] = next > 0 ? next : nil
            held = counts.isEmpty ? nil : counts
        }
    }

    /// Whether the two entries have the same key here, or both none.
    func filesAlike(_ old: CacheEntry, _ new: CacheEntry) -> Bool {
        filing.filesAlike(old, new)
    }

    /// Replaces the entry with `stored`'s id under `stored`'s key, if the map holds entries.
    func refile(_ stored: StoredEntry, in maps: inout IndexMaps) {
        guard Value.holdsEntry, let key: Key = filing.key(of: stored.entry) else { return }
        Self.change(&maps[keyPath: map], key) { values in
            if let position = values.firstIndex(where: { $0.filedID == stored.id }) { values[position] = Value(filing: stored) }
        }
    }

    /// Changes what `map` files under `key` as values (rows made into values first), and
    /// removes the key when nothing is left.
    private static func change(_ map: inout LayeredMap<Key, Filed<Value>>, _ key: Key, _ body: (inout [Value]) -> Void) {
        var values = map[key]?.values { Value(row: $1, of: $0) } ?? []
        body(&values)
        map[key] = values.isEmpty ? nil : .values(values)
    }

    /// The rows of `gathered` under the keys ``MapFiling/key(of:decoder:)`` makes of its slots.
    func converted(_ gathered: Grouping<SlotKey>, decoder: inout EntryDecoder) -> any JoinableGrouping {
        gathered.converted { filing.key(of: $0, decoder: &decoder) as Key }
    }

    /// Appends the rows of `other` (this map's keys), moved `offset` rows on, to `gathered`.
    func join(_ gathered: inout any JoinableGrouping, _ other: any JoinableGrouping, offset: Int) {
        guard var grouping = gathered as? Grouping<Key>, let other = other as? Grouping<Key> else {
            preconditionFailure("joining groupings of two key types")
        }
        // Left with nothing else, so that `grouping` owns its arrays and grows them in place.
        gathered = Grouping<Key>()
        grouping.append(other, offset: offset)
        gathered = grouping
    }

    /// Sets the map, and its tally counted per key rather than per entry, from `gathered`.
    func install(_ gathered: any JoinableGrouping, rows table: EntryTable, in maps: inout IndexMaps) {
        guard let grouping = gathered as? Grouping<Key> else { preconditionFailure("a map's gathering has another key type") }
        maps[keyPath: map] = grouping.map(of: table)
        guard let tally else { return }
        var owners = KeyTable<HashedString>()
        var accounts: [(keys: KeyTable<HashedString>, counts: [Int])] = []
        grouping.forEachKey { key, count in
            let (owner, account) = tally.owner(key)
            let ownerNumber = owners.add(owner)
            if ownerNumber == accounts.count { accounts.append((KeyTable(), [])) }
            let accountNumber = accounts[ownerNumber].keys.add(account)
            if accountNumber == accounts[ownerNumber].counts.count { accounts[ownerNumber].counts.append(0) }
            accounts[ownerNumber].counts[accountNumber] += count
        }
        maps[keyPath: tally.map] = LayeredMap(keys: owners, values: accounts.map { LayeredMap(keys: $0.keys, values: $0.counts) })
    }

    /// The map's keys and filed ids as text, and its tally's counts, named by their key paths.
    func contents(of maps: IndexMaps) -> [String: [String: [String]]] {
        var filed: [String: [String]] = [:]
        maps[keyPath: map].forEach { key, values in
            filed["\(key)"] = values.values { Value(row: $1, of: $0) }.map { "\($0.filedID.kind) \($0.filedID.key)" }
        }
        var contents = ["\(map)": filed]
        if let tally {
            var counted: [String: [String]] = [:]
            maps[keyPath: tally.map].forEach { owner, accounts in
                var listed: [String] = []
                accounts.forEach { account, count in listed.append("\(account) \(count)") }
                counted[owner.value] = listed.sorted()
            }
            contents["\(tally.map)"] = counted
        }
        return contents
    }
}
