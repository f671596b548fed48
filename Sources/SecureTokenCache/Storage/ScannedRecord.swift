/// One record frame found in a log.
struct ScannedRecord: Sendable {
    /// Where the frame starts in the log file.
    var offset: UInt64
    /// The frame's size, length field included.
    var byteCount: Int
    /// The opened record.
    var opened: OpenedRecord
}
