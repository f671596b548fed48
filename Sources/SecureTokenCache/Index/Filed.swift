/// What one key of an index map files: rows of the ``EntryTable`` the index was built from, or,
/// once a write touched the key, the values themselves.
///
/// Rows are positions in one array shared by every key of the map (``TableRows``): filing a
/// group's entries in bulk allocates nothing per key, and freeing the index releases nothing per
/// entry. A write
/// turns the key's rows into values first (``values(_:)``), so every change to a map is a change
/// to a plain array, as if the key had always held values.
enum Filed<Value>: Sendable where Value: Sendable {
    /// Rows of a table, in filing order.
    case rows(TableRows)
    /// Values, in filing order.
    case values([Value])

    /// The filed values, rows made into values by `value(table, row)`.
    func values(_ value: (EntryTable, Int) -> Value) -> [Value] {
        switch self {
        case .rows(let filed): filed.rows.map { value(filed.table, Int($0)) }
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

/// One key's rows of an ``EntryTable``: a run of the array of every key's rows of one map, which
/// the keys share.
///
/// A reference and a run, not the table and an array slice: a large group has a key per account
/// and per bucket in each of several maps, and each key holds this.
struct TableRows: Sendable {
    /// A table and the rows of every key of one map, laid out key by key.
    final class Layout: Sendable {
        let table: EntryTable
        let rows: [UInt32]

        init(table: EntryTable, rows: [UInt32]) {
            self.table = table
            self.rows = rows
        }
    }

    private let layout: Layout
    private let start: UInt32
    private let end: UInt32

    /// The rows `range` of `layout`'s.
    init(_ layout: Layout, _ range: Range<Int>) {
        self.layout = layout
        start = UInt32(range.lowerBound)
        end = UInt32(range.upperBound)
    }

    /// The table the rows are rows of.
    var table: EntryTable { layout.table }

    /// The rows, in filing order.
    var rows: ArraySlice<UInt32> { layout.rows[Int(start)..<Int(end)] }
}
