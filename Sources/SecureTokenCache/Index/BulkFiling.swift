/// Entries gathered for filing into an empty index at once (``Index/fileAll(_:)``): opening a
/// group, a reload, an import into a new group.
///
/// Each entry becomes a row of the index's ``EntryTable`` and is gathered under its key in each
/// map of ``IndexMaps/table`` it is filed in. A large group is gathered by several threads, each
/// decoding and gathering a contiguous part of the records (see ``SlotFiling``); the parts are
/// then joined in order (``append(_:)``), which costs per distinct key, not per entry.
struct BulkFiling: Sendable {
    /// The rows, in order, and what the index counts of them.
    var rows: GatheredRows
    /// The rows under their keys, one gathering per row of ``IndexMaps/table``, in its order.
    var maps: [any JoinableGrouping]

    /// A filing of `rows`, gathered under `maps`.
    init(rows: GatheredRows, maps: [any JoinableGrouping]) {
        precondition(maps.count == IndexMaps.table.count, "a bulk filing gathers every map of the index")
        self.rows = rows
        self.maps = maps
    }

    /// The number of entries gathered.
    var count: Int { rows.count }

    /// Gathers every entry of `other` after those already here, in its order.
    mutating func append(_ other: consuming BulkFiling) {
        for (number, rule) in IndexMaps.table.enumerated() { rule.join(&maps[number], other.maps[number], offset: count) }
        rows.append(other.rows)
    }
}
