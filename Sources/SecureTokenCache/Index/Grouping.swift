/// Rows of an ``EntryTable`` gathered under keys, for building one map of an index in bulk.
///
/// Opening a group files every entry under a key in each of several maps, most keys filing few
/// entries. Appending them to one array per key would grow each array a few times, allocations
/// paid again as frees when the group is closed. A grouping instead lays every key's rows out in one shared array
/// (``Filed/rows(_:_:)``), and its ``KeyTable`` becomes the map's base as it is, so no key is
/// copied or hashed again.
///
/// Threads that decode parts of a group each gather their own grouping, which ``append(_:offset:)``
/// then joins in order.
struct Grouping<Key: PrehashedKey>: Sendable {
    /// The keys, numbered in order of first appearance: a key's number is its group's.
    private var keys: KeyTable<Key>
    /// How many rows each group has.
    private var counts: [Int] = []
    /// Every row, in the order gathered, with its group.
    private var rows: [UInt32] = []
    private var groupOfRow: [Int32] = []

    /// An empty grouping with room for `rows` rows under `keys` keys.
    init(rows: Int = 0, keys: Int = 0) {
        self.keys = KeyTable(capacity: keys)
        counts.reserveCapacity(keys)
        self.rows.reserveCapacity(rows)
        groupOfRow.reserveCapacity(rows)
    }

    /// Adds `row` to the rows of `key`.
    mutating func add(_ row: Int, to key: Key) {
        let group = keys.add(key)
        if group == counts.count { counts.append(0) }
        counts[group] += 1
        rows.append(UInt32(truncatingIfNeeded: row))
        groupOfRow.append(Int32(truncatingIfNeeded: group))
    }

    /// Adds every row of `other`, moved `offset` rows on, after the rows already here.
    mutating func append(_ other: Grouping, offset: Int) {
        var renumbered = [Int32](repeating: 0, count: other.counts.count)
        // By index: each key copied once, into the table, not first out of the other's array.
        for group in other.counts.indices {
            let number = keys.add(other.keys.keys[group])
            if number == counts.count { counts.append(0) }
            counts[number] += other.counts[group]
            renumbered[group] = Int32(truncatingIfNeeded: number)
        }
        // Whole arrays mapped and appended, not a row at a time: a large group joins hundreds of
        // thousands of rows per map.
        let shift = UInt32(truncatingIfNeeded: offset)
        rows += other.rows.map { $0 &+ shift }
        groupOfRow += renumbered.withUnsafeBufferPointer { renumbered in other.groupOfRow.map { renumbered[Int($0)] } }
    }

    /// The same rows under the keys `convert` makes of these keys; keys it makes alike become
    /// one, with their rows in the order they were added. `convert` runs once per key.
    func converted<Other: PrehashedKey>(_ convert: (Key) -> Other) -> Grouping<Other> {
        var converted = Grouping<Other>(rows: 0, keys: keys.count)
        var renumbered = [Int32](repeating: 0, count: counts.count)
        for (group, key) in keys.keys.enumerated() {
            let number = converted.keys.add(convert(key))
            if number == converted.counts.count { converted.counts.append(0) }
            converted.counts[number] += counts[group]
            renumbered[group] = Int32(truncatingIfNeeded: number)
        }
        converted.rows = rows
        converted.groupOfRow = groupOfRow.map { renumbered[Int($0)] }
        return converted
    }

    /// Calls `body` with every key and how many rows it has.
    func forEachKey(_ body: (Key, Int) -> Void) {
        for (key, count) in zip(keys.keys, counts) { body(key, count) }
    }

    /// The map of every key to its rows of `table`, in the order they were added.
    func map<Value>(of table: EntryTable) -> LayeredMap<Key, Filed<Value>> {
        guard !rows.isEmpty else { return LayeredMap() }
        var starts = [Int](repeating: 0, count: counts.count + 1)
        for (group, count) in counts.enumerated() { starts[group + 1] = starts[group] + count }
        let laidOut = [UInt32](unsafeUninitializedCapacity: rows.count) { buffer, initialized in
            var next = starts
            for (row, group) in zip(rows, groupOfRow) {
                buffer[next[Int(group)]] = row
                next[Int(group)] += 1
            }
            initialized = rows.count
        }
        let layout = TableRows.Layout(table: table, rows: laidOut)
        let values = (0..<counts.count).map { group in Filed<Value>.rows(TableRows(layout, starts[group]..<starts[group + 1])) }
        return LayeredMap(keys: keys, values: values)
    }
}
