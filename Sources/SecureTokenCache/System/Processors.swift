import Glibc

/// The machine's processors, for work split across threads (opening batches, decoding and
/// filing a large group).
enum Processors {
    /// The processors online, read once: glibc's `sysconf` reads a file under `/sys` each time,
    /// which would cost more than the small jobs that ask.
    static let online = sysconf(Int32(_SC_NPROCESSORS_ONLN))
}
