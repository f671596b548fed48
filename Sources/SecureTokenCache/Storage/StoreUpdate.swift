/// What a reader must do to catch up with a store.
enum StoreUpdate: Sendable {
    /// Nothing changed since the cursor.
    case unchanged(StoreCursor)
    /// Apply these changes, in order, on top of what the cursor reflects.
    case changes([RecordChange], StoreCursor)
    /// Replace everything with these records (after a compaction by another process, say).
    case reload([Record], StoreCursor)

    /// The cursor after applying this update.
    var cursor: StoreCursor {
        switch self {
        case .unchanged(let cursor), .changes(_, let cursor), .reload(_, let cursor): cursor
        }
    }
}
