/// The changes of one sealed batch, as they open out of it.
struct OpenedBatch: Sendable {
    /// The sequence number of the first change; the change at position `i` has
    /// `firstSequence + i`.
    var firstSequence: UInt64
    /// The changes, in the order they were sealed.
    var changes: [RecordChange]
}
