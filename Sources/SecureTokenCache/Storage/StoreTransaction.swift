/// What a transaction body sees: the changes it must apply to catch up, and whether this
/// commit will compact the store (then the body may add deletions of expired access tokens,
/// which the engine purges at compaction).
struct StoreTransaction: Sendable {
    /// The changes since the caller's cursor, read under the group's lock.
    var update: StoreUpdate
    /// Whether the store will rewrite itself after this commit.
    var compacting: Bool
}
