import Glibc
import Logging

/// The lock file the MSAL SDKs' extensions take around every write of a shared cache, taken so
/// that every one of them waits for us.
///
/// The tools disagree on the protocol: msal-extensions for Python without portalocker and
/// msal-node create the file with `O_EXCL` and retry; MSAL.NET (`FileShare.None`), portalocker
/// and the Go extension `flock` it; all of them write `"<pid> <name>"` and unlink it on release.
/// So the file is created with `O_CREAT|O_EXCL` (`0600`, which makes the creators wait), then
/// `flock`ed (which makes the lockers wait), then checked to still be the file at the path (a
/// takeover may have replaced it), then given our pid. It is released by unlinking, then closing.
///
/// A lock file left behind by a process that died (its pid no longer alive, or no pid and older
/// than ``staleAge``) is taken over rather than waited on until the timeout; one whose holder is
/// alive, even stopped, is waited on, and the timeout names its pid.
struct SharedCacheLock: Sendable {
    /// The lock file's path.
    let path: String
    /// How a lock file that records no live pid must be before it is taken over: the tools give
    /// up waiting after a few seconds, so an older one is left by a process that died.
    static let staleAge = Duration.seconds(10)
    /// How long to wait between attempts: at most as long as msal-extensions does (250 ms). A
    /// waiter of ours that looked more often would take every free moment of the lock file from
    /// the tools waiting beside it, which give up after about 5 s, or (msal-extensions with
    /// portalocker) go on without the lock file, and then lose writes.
    static let backoff = FileLock.Backoff(first: .milliseconds(1), longest: .milliseconds(250))

    private let logger: Logger

    /// The lock file at `path`.
    init(path: String, logger: Logger = .discarding) {
        self.path = path
        self.logger = logger
    }

    /// Runs `body` holding the lock, waiting at most `timeout` for another holder.
    ///
    /// - Throws: ``TokenCacheError/Code/lockTimeout`` naming the holder's pid;
    ///   ``TokenCacheError/Code/insecurePermissions`` when the path is a symbolic link or a file
    ///   that is not ours; and what `body` throws.
    func withLock<Result>(timeout: Duration, _ body: () throws -> Result) throws -> Result {
        let fd = try acquire(timeout: timeout)
        defer { release(fd) }
        removeLeftovers()
        return try body()
    }

    private func acquire(timeout: Duration) throws -> Int32 {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var pause = Self.backoff.first
        while true {
            if let fd = try attempt() { return fd }
            if clock.now >= deadline {
                let holder = Self.holder(at: path)
                let who = holder.map { "process \($0)" } ?? "another process"
                throw TokenCacheError(
                    .lockTimeout,
                    "\(who) held the shared cache's lock file \(path) for \(timeout.secondsText) s; nothing was written. If that process is stuck, end it; if it no longer exists, remove the lock file"
                )
            }
            var interval = timespec(duration: pause)
            nanosleep(&interval, nil)
            pause = min(pause * 2, Self.backoff.longest)
        }
    }

    /// One attempt: the descriptor of the lock file we now hold, or `nil` when another process
    /// holds it.
    ///
    /// The file is written with our pid first, under a name of its own, then linked to the lock
    /// path, which fails when the path exists exactly as an `O_EXCL` create does. So a writer of
    /// ours killed at any moment leaves a lock file that names it, taken over at once, never an
    /// empty one that would look like a peer still writing its pid and be waited out.
    private func attempt() throws -> Int32? {
        let temporary = temporaryPrefix + String(getpid()) + "-" + SecretFingerprint.hex(try Sodium.randomBytes(4))
        let fd = try SystemCall.open(
            temporary, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600, "creating the shared cache's lock file \(path)")
        defer { unlink(temporary) }
        let record = Array("\(getpid()) \(Self.processName)".utf8)
        do {
            try record.withUnsafeBytes { try SystemCall.pwrite(fd, $0, at: 0, "writing the shared cache's lock file \(path)") }
        } catch {
            close(fd)
            throw error
        }
        guard link(temporary, path) == 0 else {
            let code = errno
            close(fd)
            guard code == EEXIST else {
                throw SystemCall.error("link", "creating the shared cache's lock file \(path)", errno: code)
            }
            try takeOverIfStale()
            return nil
        }
        // Linked: a flocking tool may have opened the new file and locked it meanwhile, and a
        // takeover may have unlinked it. Either way the file is not ours to hold.
        guard flock(fd, LOCK_EX | LOCK_NB) == 0, Self.isAtPath(fd, path) else {
            close(fd)
            return nil
        }
        return fd
    }

    /// The names our lock files have before they are linked into place.
    private var temporaryPrefix: String {
        let folder = SystemCall.parentDirectory(of: path)
        let name = SystemCall.fileName(of: path)
        return folder + "/." + name + ".stc-"
    }

    /// Removes the not-yet-linked lock files of processes that were killed before they could
    /// remove them (their names carry the pid).
    private func removeLeftovers() {
        let folder = SystemCall.parentDirectory(of: path)
        let prefix = String(temporaryPrefix.dropFirst(folder.count + 1))
        for name in SystemCall.fileNames(in: folder, startingWith: prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count).prefix { $0 != "-" }) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { SystemCall.removeLeftover(folder + "/" + name) }
        }
    }

    private func release(_ fd: Int32) {
        // Unlink first: a waiting creator gets the path only once we no longer write there.
        if Self.isAtPath(fd, path) { unlink(path) }
        close(fd)
    }

    /// Removes the lock file at the path if the process that made it is gone.
    private func takeOverIfStale() throws {
        let fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { return }  // released meanwhile
            if code == ELOOP {
                throw TokenCacheError(
                    .insecurePermissions,
                    "the shared cache's lock file \(path) is a symbolic link; no tool makes one, so nothing was written: remove it"
                )
            }
            throw SystemCall.error("open", "reading the shared cache's lock file \(path)", errno: code)
        }
        defer { close(fd) }
        let info = try SystemCall.fstat(fd, "reading the shared cache's lock file \(path)")
        guard info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else {
            throw TokenCacheError(
                .insecurePermissions,
                "the shared cache's lock file \(path) is not a regular file owned by you; nothing was written: remove it")
        }
        // A flocking holder is alive by definition; and of two processes that found the same
        // stale file, only the one holding it exclusively may remove it (the other would
        // otherwise remove the file a third one has created since).
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return }
        defer { flock(fd, LOCK_UN) }
        let age = SystemCall.age(of: info.st_mtim)
        if let pid = Self.recordedPid(fd) {
            // A live holder, stopped or not, is waited for; a dead one's file is stale at once
            // unless it was written a moment ago (pid recycling needs time).
            guard kill(pid, 0) != 0, errno == ESRCH, age > .milliseconds(100) else { return }
        } else if age < Self.staleAge {
            // Being written right now, or by a tool that writes no pid: wait for it.
            return
        }
        // Only the file we inspected, not one a new holder created at the path since.
        guard Self.isAtPath(fd, path) else { return }
        logger.notice("taking over the shared cache's lock file \(path), left by a process that no longer runs")
        unlink(path)
    }

    /// The pid recorded in the lock file at `path`, if any (read only, for messages and doctor).
    static func holder(at path: String) -> Int32? {
        let fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return recordedPid(fd)
    }

    private static func recordedPid(_ fd: Int32) -> Int32? {
        guard let bytes = try? SystemCall.pread(fd, count: 64, at: 0, "reading a lock file") else { return nil }
        let digits = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        guard !digits.isEmpty, digits.count < 10 else { return nil }
        return Int32(String(decoding: digits, as: UTF8.self))
    }

    /// Whether `fd` is the file at `path` now (same device and inode).
    private static func isAtPath(_ fd: Int32, _ path: String) -> Bool {
        var held = stat()
        var atPath = stat()
        guard fstat(fd, &held) == 0, Glibc.lstat(path, &atPath) == 0 else { return false }
        return held.st_ino == atPath.st_ino && held.st_dev == atPath.st_dev
    }

    /// What the other tools write after the pid: the program's name.
    private static let processName: String = {
        var buffer = [UInt8](repeating: 0, count: 256)
        let fd = Glibc.open("/proc/self/comm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "securetokencache" }
        defer { close(fd) }
        let count = Glibc.read(fd, &buffer, buffer.count)
        guard count > 0 else { return "securetokencache" }
        return String(decoding: buffer[..<count].prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }()
}
