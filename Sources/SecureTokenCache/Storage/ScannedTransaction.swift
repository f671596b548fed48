/// One complete, committed transaction found in a log.
struct ScannedTransaction: Sendable {
    /// Its record frames, in order.
    var records: [ScannedRecord]
    /// The offset just after its commit frame.
    var end: UInt64
    /// Its commit frame's sequence number (the largest of the transaction).
    var commitSequence: UInt64
}
