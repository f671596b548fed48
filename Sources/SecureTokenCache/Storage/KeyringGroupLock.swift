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
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let error = errno
            guard error == EWOULDBLOCK || error == EINTR else {
                throw TokenCacheError(.ioFailure, "cannot lock \(path)", underlying: .posix(call: "flock", errno: error))
            }
            guard clock.now < deadline else {
                throw TokenCacheError(
                    .lockTimeout,
                    "another process (pid \(Self.holder(fd))) held the group lock \(path) for more than \(timeout); retry later"
                )
            }
            usleep(2_000)
        }
        defer { flock(fd, LOCK_UN) }
        Self.recordHolder(fd)
        return try body()
    }

    private static func recordHolder(_ fd: Int32) {
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    private static func holder(_ fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return "unknown" }
        return String(decoding: buffer[..<count], as: UTF8.self).trimmingNewline()
    }
}

extension String {
    fileprivate func trimmingNewline() -> String {
        hasSuffix("\n") ? String(dropLast()) : self
    }
}
