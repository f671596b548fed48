/// What a map of ``IndexMaps`` files under a key: an entry's id, resolved through the id map
/// when asked for, or the entry itself, for a map whose hits must not hash a second key.
protocol FiledValue: Sendable {
    /// Whether the value is the entry itself, so rewriting the entry under its id changes it
    /// even when every key stays the same.
    static var holdsEntry: Bool { get }
    /// The value filed for `stored`.
    init(filing stored: StoredEntry)
    /// The value filed for the entry in `row` of `table`.
    init(row: Int, of table: EntryTable)
    /// The id of the entry filed.
    var filedID: EntryID { get }
}

extension EntryID: FiledValue {
    /// An id does not change with its entry.
    static var holdsEntry: Bool { false }
    /// The entry's id.
    init(filing stored: StoredEntry) { self = stored.id }
    /// The row's id.
    init(row: Int, of table: EntryTable) { self = table.id(at: row) }
    /// The id itself.
    var filedID: EntryID { self }
}

extension StoredEntry: FiledValue {
    /// The entry is the value.
    static var holdsEntry: Bool { true }
    /// The entry itself.
    init(filing stored: StoredEntry) { self = stored }
    /// The row's entry, typed.
    init(row: Int, of table: EntryTable) { self = table.stored(at: row) }
    /// The entry's id.
    var filedID: EntryID { id }
}
