import Glibc

/// A group's cross-process write lock: `flock` on the group's `lock` file, which is never unlinked
/// (unlinking would let two processes lock two different files).
///
/// Waits at most a bounded time; the holder writes its pid into the file, so a timeout can name
/// the process in the way. The kernel releases the lock when the holder dies, so a killed writer
/// never wedges the group. One instance per store: `flock` locks belong to the open file
/// description, so two instances in one process exclude each other like two processes do.
final class GroupLock: @unchecked Sendable {
    private let fd: Int32

    /// Takes ownership of `fd`, the open lock file.
    init(fd: Int32) {
        self.fd = fd
    }

    deinit {
        close(fd)
    }

    /// Takes the lock, waiting at most `timeout` seconds. Throws
    /// ``TokenCacheError/Code/lockTimeout`` naming the holder's pid if it is not free in time.
    func acquire(timeout: Double) throws {
        try Self.lock(fd, timeout: timeout)
    }

    /// Takes an exclusive `flock` on the open lock file `fd`, waiting at most `timeout` seconds,
    /// then records this process's pid in it. The one waiting loop of every group lock (the
    /// FileStore's and the KeyringStore's). Throws ``TokenCacheError/Code/lockTimeout`` naming
    /// the holder's pid, or ``TokenCacheError/Code/ioFailure``.
    static func lock(_ fd: Int32, timeout: Double) throws {
        var clock = timespec()
        clock_gettime(CLOCK_MONOTONIC, &clock)
        let deadline = Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9 + timeout
        var pause: UInt32 = 100  // microseconds, doubling up to 5 ms
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR else { throw SystemCall.error("flock", "locking the group") }
            clock_gettime(CLOCK_MONOTONIC, &clock)
            if Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9 >= deadline {
                let holder =
                    (try? SystemCall.pread(fd, count: 32, at: 0, "reading the lock holder"))
                    .flatMap { String(decoding: $0, as: UTF8.self).split(separator: "\n").first.map(String.init) } ?? "unknown"
                throw TokenCacheError(
                    .lockTimeout,
                    "the group is locked by another process (pid \(holder)) for more than \(timeout) s; retry, or check whether that process is stuck"
                )
            }
            usleep(pause)
            pause = min(pause * 2, 5000)
        }
        let pid = Array("\(getpid())\n".utf8)
        // Diagnostics only: a failure to record the pid must not fail the write.
        _ = pid.withUnsafeBytes { Glibc.pwrite(fd, $0.baseAddress, $0.count, 0) }
        _ = Glibc.ftruncate(fd, off_t(pid.count))
    }

    /// Takes the lock only if it is free right now (for repairs a reader may do on the side).
    func tryAcquire() -> Bool {
        flock(fd, LOCK_EX | LOCK_NB) == 0
    }

    /// Releases the lock.
    func release() {
        flock(fd, LOCK_UN)
    }
}
