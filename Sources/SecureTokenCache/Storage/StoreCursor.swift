/// Where a reader is in a store's history. Opaque to everything but the store that made it.
struct StoreCursor: Sendable, Hashable {
    /// The group's generation this cursor reflects.
    var generation: UInt64
    /// Changes when the store's history is rewritten (compaction, restore): a cursor from
    /// another epoch can only be caught up by a reload.
    var epoch: UInt64
    /// A store-specific position (for the FileStore, the log offset after the last commit seen).
    var position: UInt64

    /// The cursor of a reader that has seen nothing.
    static let start = StoreCursor(generation: 0, epoch: 0, position: 0)

    /// The cursor of a group's index before it filed what its open read: no store reaches it,
    /// so the first read catches up (see ``CacheGroup``'s `filesOnFirstUse`).
    static let unfiled = StoreCursor(generation: .max, epoch: .max, position: .max)
}
