/// An open log file of one epoch. Shared by reference so a reader can keep reading a log a
/// compaction has just replaced (the old file stays readable until the last handle closes).
final class LogHandle: Sendable {
    /// The open descriptor (read-write: the lock holder appends through it).
    let fd: Int32
    /// The epoch in the file's header.
    let epoch: UInt16

    /// Takes ownership of `fd`.
    init(fd: Int32, epoch: UInt16) {
        self.fd = fd
        self.epoch = epoch
    }

    deinit {
        SystemCall.close(fd)
    }
}
