import Glibc

/// A group's cross-process write lock for the KeyringStore: `flock` on a lock file that is never
/// unlinked, taken with a bounded wait, with the holder's pid written into the file for
/// diagnostics.
///
/// Each acquisition opens its own file description, so two threads of one process exclude each
/// other as two processes do (`flock` locks belong to the open file description).
final class KeyringGroupLock: Sendable {
    /// The lock file's path.
    let path: String
    /// How long to wait for another holder before giving up.
    let timeout: Duration

    /// The lock of the group whose runtime folder is `directory`.
    init(directory: KeyringGroupDirectory, timeout: Duration = .seconds(10)) {
        path = directory.file("lock")
        self.timeout = timeout
    }

    /// Runs `body` while holding the lock.
    ///
    /// - Throws: ``TokenCacheError/Code/lockTimeout`` if another holder keeps the lock longer than
    ///   ``timeout`` (the message names its pid), ``TokenCacheError/Code/ioFailure`` if the lock
    ///   file cannot be opened; and whatever `body` throws.
    func withLock<R>(_ body: () throws -> R) throws -> R {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw TokenCacheError(.ioFailure, "cannot open the lock file \(path)", underlying: .posix(call: "open", errno: errno))
        }
        defer { close(fd) }  // closing the last descriptor of the description releases the lock
        let parts = timeout.components
        try GroupLock.lock(fd, timeout: Double(parts.seconds) + Double(parts.attoseconds) / 1e18)
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}
