/// One complete, committed transaction found in a log.
struct ScannedTransaction: Sendable {
    /// Its changes: their positions in the ``ScannedLog/changes`` of the scan that found it.
    var changes: Range<Int>
    /// The offset just after its commit frame.
    var end: UInt64
    /// Its commit frame's sequence number (the largest of the transaction).
    var commitSequence: UInt64
}
