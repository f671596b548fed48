/// A test seam under every change the stores make to files: the power-loss tests record what
/// reaches the kernel (writes, syncs, renames) and rebuild each on-disk state that a power cut
/// between two calls could leave.
extension SystemCall {
    /// A change that one of ``SystemCall``'s calls made, reported after it succeeded. Opens and
    /// closes are reported too, so an observer can tell which file a descriptor names.
    enum Event: Sendable {
        /// `open` of `path` with `flags` returned `fd` (a directory too, when it is opened to
        /// be synced).
        case opened(path: String, flags: Int32, fd: Int32)
        /// `fd` was closed.
        case closed(fd: Int32)
        /// `bytes` were written to `fd` at `offset` (a short write reports what it wrote).
        case wrote(fd: Int32, offset: UInt64, bytes: [UInt8])
        /// `fsync` of `fd` returned.
        case synced(fd: Int32)
        /// The file of `fd` was cut (or extended) to `length` bytes.
        case truncated(fd: Int32, length: UInt64)
        /// `byteCount` bytes of `fd` were mapped shared at `address`.
        case mapped(fd: Int32, address: UInt, byteCount: Int)
        /// The mapping at `address` was removed.
        case unmapped(address: UInt)
        /// `msync` wrote the mapping at `address` back to its file, which now holds `bytes`.
        case syncedMapping(address: UInt, bytes: [UInt8])
        /// The times of `path` were set to now. Stores into a shared mapping make no system call;
        /// a store announces each one this way (``SharedState``), so this is where an observer
        /// sees what such a file holds before it is synced.
        case touched(path: String)
        /// `source` was renamed to `destination`.
        case renamed(source: String, destination: String)
        /// `source` was linked as `destination`.
        case linked(source: String, destination: String)
        /// The file or empty directory `path` was removed.
        case removed(path: String)
        /// The directory `path` was created.
        case madeDirectory(path: String)
    }

    /// Told of every ``Event`` of the calls made in the task that binds it (with
    /// `SystemCall.$observer.withValue(_:operation:)`), and of no other task's: tests that run
    /// at once each see their own calls only. Unbound, which is always the case outside tests,
    /// a call pays one task-local lookup and copies nothing. Bound, it is handed a copy of every
    /// byte written (a key file's too), so nothing but a test may bind it.
    @TaskLocal static var observer: (@Sendable (Event) -> Void)?

    /// An `fsync` that a store's durability rests on, named so that a test can leave it out
    /// (``droppedSyncs``).
    enum Sync: Sendable, Hashable, CaseIterable {
        /// The log's, after a transaction was appended: what makes a commit durable.
        case appendedLog
        /// The group folder's, after a compaction renamed its new log into place: what makes
        /// the rename durable before the new epoch is published.
        case compactionRename
    }

    /// The syncs that the calls of the task that binds it (with
    /// `SystemCall.$droppedSyncs.withValue(_:operation:)`) skip, as if the store's code had no
    /// such call: the power-loss tests bind it to show that they find the acknowledged
    /// transactions a missing sync loses. Empty, which is always the case outside tests, it
    /// costs a sync that names itself one task-local lookup.
    @TaskLocal static var droppedSyncs: Set<Sync> = []

    /// The directory syncs that fail with `EIO` in the task that binds it, as a disk's error or
    /// a process out of descriptors would have them: the tests bind it to show that a store
    /// acknowledges nothing whose durability rests on a sync that failed. Empty outside tests.
    @TaskLocal static var failingSyncs: Set<Sync> = []
}
