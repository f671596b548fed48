import Glibc
import Logging

/// An exclusive `flock` on a file that is never unlinked: the one lock every cross-process
/// exclusion of a group is made of (the group's write lock and its refresh locks, in every store).
///
/// Unlinking a lock file that another process has open would let two holders in at once, so the
/// file stays. Each acquisition opens its own file description (`flock` locks belong to the open
/// file description), so two threads of one process exclude each other as two processes do, and
/// the kernel releases the lock when its holder dies. The holder writes its pid into the file, so
/// a timeout names the process in the way and `cachetool doctor` can show who holds it.
struct FileLock: Sendable {
    /// How long to sleep between two attempts: from `first`, doubling up to `longest`.
    struct Backoff: Sendable {
        /// The first pause.
        var first: Duration
        /// The longest pause.
        var longest: Duration

        /// For write locks, held for the few milliseconds of a commit: a waiter gets in soon after.
        static let writer = Backoff(first: .microseconds(100), longest: .milliseconds(5))
        /// For refresh locks, held for a network round trip: a waiter polls less often.
        static let refresh = Backoff(first: .milliseconds(2), longest: .milliseconds(20))
    }

    /// The lock file's path.
    let path: String
    /// What the lock guards, for messages ("the group", "this account's token refresh").
    let purpose: String
    /// Where a wait longer than ``longWait`` is reported.
    let logger: Logger

    /// A wait longer than this is logged: a holder that slow is worth an operator's look.
    static let longWait = Duration.seconds(1)

    /// A lock on the file at `path` (created 0600 on first use).
    init(path: String, purpose: String, logger: Logger = .discarding) {
        self.path = path
        self.purpose = purpose
        self.logger = logger
    }

    /// Runs `body` holding the lock, waiting at most `timeout` for another holder.
    ///
    /// - Throws: ``TokenCacheError/Code/lockTimeout`` naming the holder's pid when the lock is not
    ///   free in time; ``TokenCacheError/Code/insecurePermissions`` if the file is not a regular
    ///   file of this user with mode 0600; ``TokenCacheError/Code/ioFailure``; and what `body`
    ///   throws.
    func withLock<Result>(timeout: Duration, backoff: Backoff = .writer, _ body: () throws -> Result) throws -> Result {
        let fd = try openFile()
        defer { SystemCall.close(fd) }  // closing the last descriptor of the description releases the lock
        let start = ContinuousClock.now
        var pause = backoff.first
        while try !tryLock(fd) {
            guard ContinuousClock.now - start < timeout else { throw timedOut(fd, after: timeout) }
            SystemCall.sleep(for: pause)
            pause = min(pause * 2, backoff.longest)
        }
        noteWait(since: start)
        recordHolder(fd)
        return try body()
    }

    /// Runs `body` holding the lock, or returns `nil` at once if another holder has it.
    func withLockIfFree<Result>(_ body: () throws -> Result) throws -> Result? {
        let fd = try openFile()
        defer { SystemCall.close(fd) }
        guard try tryLock(fd) else { return nil }
        recordHolder(fd)
        return try body()
    }

    /// ``withLock(timeout:backoff:_:)`` for a task: waits by sleeping the task, never a thread of
    /// the cooperative pool. Cancellation while waiting throws ``TokenCacheError/Code/lockTimeout``.
    func withLock<Result>(
        timeout: Duration, backoff: Backoff = .refresh, _ body: () async throws -> Result
    ) async throws -> Result {
        let fd = try openFile()
        defer { SystemCall.close(fd) }
        let start = ContinuousClock.now
        var pause = backoff.first
        while try !tryLock(fd) {
            guard ContinuousClock.now - start < timeout else { throw timedOut(fd, after: timeout) }
            do {
                try await Task.sleep(for: pause)
            } catch {
                throw TokenCacheError(.lockTimeout, "cancelled while waiting for \(purpose)")
            }
            pause = min(pause * 2, backoff.longest)
        }
        noteWait(since: start)
        recordHolder(fd)
        return try await body()
    }

    /// The pid recorded by the current or last holder, whether a process holds the lock now, and
    /// when the holder recorded its pid (the file's modification time: each holder writes it once,
    /// on taking the lock); `nil` if the file does not exist. Read only: never creates the file
    /// or takes the lock (a shared `flock` probe would briefly block writers; `F_GETLK`-style
    /// probing does not see `flock` locks, so this reads `/proc/locks`).
    func holder() -> (pid: Int32?, held: Bool, since: timespec)? {
        guard let fd = try? SystemCall.open(path, O_RDONLY | O_NOFOLLOW, 0, "reading the lock file \(path)") else { return nil }
        defer { SystemCall.close(fd) }
        guard let info = try? SystemCall.fstat(fd, "checking the lock file \(path)") else { return nil }
        let pid = Self.recordedPid(fd)
        return (pid, Self.isLocked(inode: info.st_ino, device: info.st_dev), info.st_mtim)
    }

    private func openFile() throws -> Int32 {
        try SystemCall.openPrivateFile(path, O_RDWR | O_CREAT, "opening the lock file \(path)")
    }

    /// Takes the lock if it is free now.
    private func tryLock(_ fd: Int32) throws -> Bool {
        try SystemCall.flock(fd, LOCK_EX | LOCK_NB, "locking \(purpose)")
    }

    /// Logs a wait for the lock that took longer than ``longWait``, naming the last holder.
    private func noteWait(since start: ContinuousClock.Instant) {
        let waited = ContinuousClock.now - start
        guard waited > Self.longWait else { return }
        let holder = holder()?.pid.map { "pid \($0)" } ?? "an unknown process"
        logger.notice("waited \(waited.secondsText) for \(purpose), held by \(holder)")
    }

    /// Writes this process's pid into the file (diagnostics only: a failure must not fail the holder).
    private func recordHolder(_ fd: Int32) {
        let pid = Array("\(getpid())\n".utf8)
        try? pid.withUnsafeBytes { try SystemCall.pwrite(fd, $0, at: 0, "recording the lock holder") }
        try? SystemCall.ftruncate(fd, UInt64(pid.count), "recording the lock holder")
    }

    private func timedOut(_ fd: Int32, after timeout: Duration) -> TokenCacheError {
        let holder = Self.recordedPid(fd).map { "pid \($0)" } ?? "an unknown process"
        return TokenCacheError(
            .lockTimeout,
            "\(purpose) is held by another process (\(holder)) for more than \(timeout.secondsText); retry, or check whether that process is stuck"
        )
    }

    private static func recordedPid(_ fd: Int32) -> Int32? {
        guard let bytes = try? SystemCall.pread(fd, count: 16, at: 0, "reading the lock holder") else { return nil }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.flatMap { Int32($0) }
    }

    /// Whether `/proc/locks` lists a `flock` held on the file with this device and inode.
    private static func isLocked(inode: ino_t, device: dev_t) -> Bool {
        let what = "reading /proc/locks"
        guard let fd = try? SystemCall.open("/proc/locks", O_RDONLY, 0, what) else { return false }
        defer { SystemCall.close(fd) }
        guard let bytes = try? SystemCall.readSequentially(fd, what) else { return false }
        // Holders' lines read "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF" (major and minor
        // in hex); waiters' lines have "->" after the number and are skipped by the field count.
        let major = UInt64((device >> 8) & 0xfff) | UInt64((device >> 32) & ~0xfff)
        let minor = UInt64(device & 0xff) | UInt64((device >> 12) & ~0xff)
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count > 5, fields[1] == "FLOCK" else { continue }
            let identity = fields[5].split(separator: ":")
            if identity.count == 3, UInt64(identity[2]) == UInt64(inode), UInt64(identity[0], radix: 16) == major,
                UInt64(identity[1], radix: 16) == minor
            {
                return true
            }
        }
        return false
    }
}

extension Duration {
    /// The duration in seconds for messages, such as "2.5 s".
    var secondsText: String {
        let parts = components
        let milliseconds = parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(Double(milliseconds) / 1000) s"
    }
}
