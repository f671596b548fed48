/// What one key of an index map files: rows of the ``EntryTable`` the index was built from, or,
/// once a write touched the key, the values themselves.
///
/// Rows are positions in one array shared by every key of the map: filing a group's entries in
/// bulk allocates nothing per key, and freeing the index releases nothing per entry. A write
/// turns the key's rows into values first (``values(_:)``), so every change to a map is a change
/// to a plain array, as if the key had always held values.
enum Filed<Value>: Sendable where Value: Sendable {
    /// Rows of `table`, in filing order.
    case rows(EntryTable, ArraySlice<UInt32>)
    /// Values, in filing order.
    case values([Value])

    /// The filed values, rows made into values by `value(table, row)`.
    func values(_ value: (EntryTable, Int) -> Value) -> [Value] {
        switch self {
        case .rows(let table, let rows): rows.map { value(table, Int($0)) }
        case .values(let values): values
        }
    }
}

extension Filed where Value == EntryID {
    /// The ids filed.
    var ids: [EntryID] { values { table, row in table.id(at: row) } }
}

extension Filed where Value == StoredEntry {
    /// The entries filed.
    var entries: [StoredEntry] { values { table, row in table.stored(at: row) } }
}
