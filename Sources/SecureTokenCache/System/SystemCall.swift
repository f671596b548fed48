import Glibc

/// Every system call the stores make, in one place: thin wrappers that retry on EINTR where that
/// is right, and turn failures into ``TokenCacheError`` values that keep the call and `errno`
/// (``error(_:_:errno:)``). The few calls whose failure leaves the caller nothing to do are
/// non-throwing, and each says why. Each change a call makes to a file is told to ``observer``
/// when a test has bound one.
enum SystemCall {
    /// The error for a failed `call` (with the current `errno`): `.diskFull` for ENOSPC, EFBIG
    /// and EDQUOT, `.ioFailure` otherwise. `what` says what was being done, for a person.
    static func error(_ call: String, _ what: String, errno code: Int32 = errno) -> TokenCacheError {
        let disk = code == ENOSPC || code == EFBIG || code == EDQUOT
        return TokenCacheError(
            disk ? .diskFull : .ioFailure,
            disk ? "\(what): the disk or the file-size limit is full; nothing was written" : "\(what) failed: \(describe(code))",
            underlying: .posix(call: call, errno: code)
        )
    }

    /// `strerror` text for `code`.
    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// Opens `path`, retrying on EINTR. Throws unless it succeeds.
    static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0o600, _ what: String) throws -> Int32 {
        while true {
            let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 {
                observer?(.opened(path: path, flags: flags, fd: fd))
                return fd
            }
            if errno != EINTR { throw error("open", what) }
        }
    }

    /// Closes `fd`. Never retried and never reported: Linux releases the descriptor even when
    /// `close` fails (a retry could close a descriptor another thread just opened), and every
    /// write whose loss matters was synced before its descriptor is closed, so a failure here
    /// leaves the caller nothing to do.
    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
        observer?(.closed(fd: fd))
    }

    /// `O_NOATIME`, which glibc declares only for `_GNU_SOURCE` (Swift's Glibc module has no
    /// such macro): reads through the descriptor leave the file's access time as it is.
    static let noAccessTime: Int32 = 0o1_000_000

    /// ``open(_:_:_:_:)`` with ``noAccessTime``. Every process reads a group's log after each
    /// commit, and under `relatime` the first read after a write updates the access time, which
    /// on ext4 dirties and journals the inode inside the reader's catch-up. Only a file's owner may ask for it; for anyone else's file (EPERM) this opens
    /// without it and leaves the verdict to the caller's ownership check.
    static func openWithoutAccessTime(_ path: String, _ flags: Int32, _ mode: mode_t = 0o600, _ what: String) throws -> Int32 {
        while true {
            let fd = Glibc.open(path, flags | noAccessTime | O_CLOEXEC, mode)
            if fd >= 0 {
                observer?(.opened(path: path, flags: flags, fd: fd))
                return fd
            }
            if errno == EPERM { return try open(path, flags, mode, what) }
            if errno != EINTR { throw error("open", what) }
        }
    }

    /// Opens a group file at `path` (never following a symlink; ``noAccessTime`` when asked) and
    /// checks that it is a regular file owned by this user with no group or other access: the one
    /// place where a group file's ownership and mode are checked. Returns its descriptor.
    ///
    /// - Throws: ``TokenCacheError/Code/insecurePermissions`` for any other file (its descriptor
    ///   closed), and the errors of ``open(_:_:_:_:)``.
    static func openPrivateFile(_ path: String, _ flags: Int32, withoutAccessTime: Bool = false, _ what: String) throws -> Int32 {
        let fd =
            withoutAccessTime
            ? try openWithoutAccessTime(path, flags | O_NOFOLLOW, 0o600, what) : try open(path, flags | O_NOFOLLOW, 0o600, what)
        do {
            let info = try fstat(fd, what)
            guard info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else {
                throw TokenCacheError(
                    .insecurePermissions, "\(path) must be a regular file owned by you with mode 0600; fix or remove it")
            }
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// Reads exactly `count` bytes at `offset` (fewer only at end of file).
    static func pread(_ fd: Int32, count: Int, at offset: UInt64, _ what: String) throws -> [UInt8] {
        try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = 0
            HugePages.advise(UnsafeMutableRawBufferPointer(buffer))
            initialized = try pread(fd, into: UnsafeMutableRawBufferPointer(buffer), at: offset, what)
        }
    }

    /// Fills `buffer` with the bytes at `offset` (bytes held elsewhere, such as a key in guarded
    /// memory, are never copied through an array). Returns how many were read: fewer than the
    /// buffer holds only at end of file.
    static func pread(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64, _ what: String) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = Glibc.pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw error("pread", what)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Every byte of a file whose size cannot be asked (a `/proc` file reports 0), read in order
    /// to its end: such a file may return less than asked before its end, so only an empty read
    /// ends it.
    static func readSequentially(_ fd: Int32, _ what: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw error("read", what)
            }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
        }
    }

    /// Every byte of a regular file from `offset` to its end. A catch-up reads a few kilobytes
    /// of the journal this way in one system call: a read of a regular file that returns less
    /// than it asked for has reached the end, so the size need not be asked first. (A signal
    /// cutting a read short would only make the end look earlier; journal readers check what
    /// they read and fall back to the keyring item.)
    static func readToEnd(_ fd: Int32, from offset: UInt64, _ what: String) throws -> [UInt8] {
        let guess = 64 << 10
        var reachedEnd = false
        var bytes = try [UInt8](unsafeUninitializedCapacity: guess) { buffer, initialized in
            var n: Int
            repeat {
                n = Glibc.pread(fd, buffer.baseAddress!, guess, off_t(offset))
            } while n < 0 && errno == EINTR
            guard n >= 0 else {
                initialized = 0
                throw error("pread", what)
            }
            initialized = n
            reachedEnd = n < guess
        }
        if reachedEnd { return bytes }
        // Longer than the first read: the rest, to the end as it is now.
        let size = UInt64(try fstat(fd, what).st_size)
        let read = offset + UInt64(bytes.count)
        if size > read { bytes += try pread(fd, count: Int(size - read), at: read, what) }
        return bytes
    }

    /// Writes all of `bytes` at `offset`, retrying short writes. On failure some prefix may have
    /// been written: the caller rolls back.
    static func pwrite(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: UInt64, _ what: String) throws {
        var done = 0
        while done < bytes.count {
            let n = Glibc.pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw error("pwrite", what)
            }
            if let observer {
                let written = UnsafeRawBufferPointer(rebasing: bytes[done..<done + n])
                observer(.wrote(fd: fd, offset: offset + UInt64(done), bytes: Array(written)))
            }
            done += n
        }
    }

    /// `fsync`, retrying on EINTR. `sync` names the sync for a test that leaves it out
    /// (``droppedSyncs``).
    static func fsync(_ fd: Int32, _ what: String, sync: Sync? = nil) throws {
        if let sync, droppedSyncs.contains(sync) { return }
        while Glibc.fsync(fd) != 0 {
            if errno != EINTR { throw error("fsync", what) }
        }
        observer?(.synced(fd: fd))
    }

    /// `ftruncate`, retrying on EINTR.
    static func ftruncate(_ fd: Int32, _ length: UInt64, _ what: String) throws {
        while Glibc.ftruncate(fd, off_t(length)) != 0 {
            if errno != EINTR { throw error("ftruncate", what) }
        }
        observer?(.truncated(fd: fd, length: length))
    }

    /// `fstat` of an open descriptor.
    static func fstat(_ fd: Int32, _ what: String) throws -> stat {
        var info = stat()
        guard Glibc.fstat(fd, &info) == 0 else { throw error("fstat", what) }
        return info
    }

    /// Takes or releases a `flock` on `fd` (`operation` as for `flock(2)`). Returns `false`
    /// when a non-blocking request (`LOCK_NB`) finds the lock held, or a signal interrupted the
    /// call: the caller's wait loop tries again.
    static func flock(_ fd: Int32, _ operation: Int32, _ what: String) throws -> Bool {
        if flockFile(fd, operation) == 0 { return true }
        let code = errno
        guard code == EWOULDBLOCK || code == EINTR else { throw error("flock", what, errno: code) }
        return false
    }

    /// Maps `byteCount` bytes of `fd` from its start, readable and writable, `MAP_SHARED` (what
    /// one process stores, every other process that maps the file sees). Unmap it with
    /// ``munmap(_:_:)``.
    static func mmapShared(_ fd: Int32, byteCount: Int, _ what: String) throws -> UnsafeMutableRawPointer {
        guard let mapped = Glibc.mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), mapped != MAP_FAILED else {
            throw error("mmap", what)
        }
        observer?(.mapped(fd: fd, address: UInt(bitPattern: mapped), byteCount: byteCount))
        return mapped
    }

    /// Unmaps a mapping made by ``mmapShared(_:byteCount:_:)``. Not reported: it fails only for
    /// an address range that is not a mapping, which its one owner never passes.
    static func munmap(_ base: UnsafeMutableRawPointer, _ byteCount: Int) {
        _ = Glibc.munmap(base, byteCount)
        observer?(.unmapped(address: UInt(bitPattern: base)))
    }

    /// Writes a shared mapping back to its file and waits until it is on disk.
    static func msync(_ base: UnsafeMutableRawPointer, _ byteCount: Int, _ what: String) throws {
        guard Glibc.msync(base, byteCount, MS_SYNC) == 0 else { throw error("msync", what) }
        if let observer {
            observer(
                .syncedMapping(
                    address: UInt(bitPattern: base), bytes: Array(UnsafeRawBufferPointer(start: base, count: byteCount))))
        }
    }

    /// Sets the access and modification times of `path` (never following a symlink) to now.
    static func touch(_ path: String, _ what: String) throws {
        guard Glibc.utimensat(AT_FDCWD, path, nil, AT_SYMLINK_NOFOLLOW) == 0 else { throw error("utimensat", what) }
        observer?(.touched(path: path))
    }

    /// Renames `source` to `destination`, replacing a file there (or an empty directory, for a
    /// directory).
    static func rename(_ source: String, _ destination: String, _ what: String) throws {
        guard Glibc.rename(source, destination) == 0 else { throw error("rename", what) }
        observer?(.renamed(source: source, destination: destination))
    }

    /// Removes the file `path`. Returns `false` if there was none.
    @discardableResult
    static func unlink(_ path: String, _ what: String) throws -> Bool {
        if Glibc.unlink(path) == 0 {
            observer?(.removed(path: path))
            return true
        }
        if errno == ENOENT { return false }
        throw error("unlink", what)
    }

    /// Removes a file left over by this process or a dead one (a temporary file that lost a race,
    /// or one a crash left behind), when nothing depends on its removal: every such name is either
    /// unique or opened with `O_EXCL` by its next user, which then reports the failure that
    /// matters. So a failure here is not reported.
    static func removeLeftover(_ path: String) {
        if Glibc.unlink(path) == 0 { observer?(.removed(path: path)) }
    }

    /// ``removeLeftover(_:)`` for an empty directory.
    static func removeLeftoverDirectory(_ path: String) {
        if Glibc.rmdir(path) == 0 { observer?(.removed(path: path)) }
    }

    /// Creates the directory `path`, mode `0700`: every folder the stores make is private.
    /// Returns `false` if something exists there already (the caller checks what it is).
    @discardableResult
    static func mkdir(_ path: String, _ what: String) throws -> Bool {
        if Glibc.mkdir(path, 0o700) == 0 {
            observer?(.madeDirectory(path: path))
            return true
        }
        if errno == EEXIST { return false }
        throw error("mkdir", what)
    }

    /// The process's working directory.
    static func currentDirectory(_ what: String) throws -> String {
        guard let path = Glibc.getcwd(nil, 0) else { throw error("getcwd", what) }
        defer { free(path) }
        return String(cString: path)
    }

    /// How long ago the wall-clock time `time` (a file's time) was; negative when it is ahead of
    /// this machine's clock.
    static func age(of time: timespec) -> Duration {
        var now = timespec()
        Glibc.clock_gettime(CLOCK_REALTIME, &now)
        return .seconds(now.tv_sec - time.tv_sec) + .nanoseconds(now.tv_nsec - time.tv_nsec)
    }

    /// Sleeps the calling thread for `duration` (not a task: for synchronous waits only). A
    /// signal may end it early; callers wait in loops that check their deadline.
    static func sleep(for duration: Duration) {
        var interval = timespec(duration: duration)
        _ = Glibc.nanosleep(&interval, nil)
    }

    /// Lets another thread run before this one goes on (for a wait expected to end within
    /// microseconds).
    static func yieldThread() {
        _ = Glibc.sched_yield()
    }

    /// `lstat` of a path, or `nil` if it does not exist.
    static func lstat(_ path: String, _ what: String) throws -> stat? {
        var info = stat()
        if Glibc.lstat(path, &info) == 0 { return info }
        if errno == ENOENT { return nil }
        throw error("lstat", what)
    }

    /// Makes a directory's entries durable (after a create or a rename in it). `sync` names the
    /// sync for a test that leaves it out (``droppedSyncs``) or has it fail (``failingSyncs``).
    static func fsyncDirectory(_ path: String, sync: Sync? = nil) throws {
        if let sync {
            if droppedSyncs.contains(sync) { return }
            if failingSyncs.contains(sync) { throw error("fsync", "syncing directory \(path)", errno: EIO) }
        }
        let fd = try open(path, O_RDONLY | O_DIRECTORY, 0, "opening \(path) to sync it")
        defer { close(fd) }
        try fsync(fd, "syncing directory \(path)")
    }

    /// Writes `bytes` to a new file at `path` (which must not exist), `0600`, and syncs it.
    static func writeNewFile(_ path: String, _ bytes: [UInt8], _ what: String) throws {
        try bytes.withUnsafeBytes { try writeNewFile(path, $0, what) }
    }

    /// `writeNewFile` for bytes held elsewhere (a key in guarded memory is
    /// never copied into an array).
    static func writeNewFile(_ path: String, _ bytes: UnsafeRawBufferPointer, _ what: String) throws {
        let fd = try open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600, what)
        defer { close(fd) }
        try pwrite(fd, bytes, at: 0, what)
        try fsync(fd, what)
    }

    /// Creates the file `path` holding `bytes` (`0600`, synced) unless it exists, so that no
    /// process ever sees it half-written: the bytes are written to a new file beside it and
    /// linked into place, and of racing creators exactly one link wins. Returns whether this call
    /// created the file (`false`: it existed, and is left as it is).
    @discardableResult
    static func createFileWhole(_ path: String, _ bytes: [UInt8], _ what: String) throws -> Bool {
        try bytes.withUnsafeBytes { try createFileWhole(path, $0, what) }
    }

    /// `createFileWhole` for bytes held elsewhere (a key in guarded memory).
    @discardableResult
    static func createFileWhole(_ path: String, _ bytes: UnsafeRawBufferPointer, _ what: String) throws -> Bool {
        let temporary = path + ".new-\(getpid())-" + SecretFingerprint.hex(try Sodium.randomBytes(4))
        try writeNewFile(temporary, bytes, what)
        defer { removeLeftover(temporary) }
        if Glibc.link(temporary, path) == 0 {
            observer?(.linked(source: temporary, destination: path))
            return true
        }
        if errno == EEXIST { return false }
        throw error("link", what)
    }

    /// The whole content of an open file.
    static func readAll(_ fd: Int32, _ what: String) throws -> [UInt8] {
        let info = try fstat(fd, what)
        return try pread(fd, count: Int(info.st_size), at: 0, what)
    }

    /// The last component of `path` (all of it when it has no `/`).
    static func fileName(of path: String) -> String {
        String(path[(path.lastIndex(of: "/").map(path.index(after:)) ?? path.startIndex)...])
    }

    /// The directory part of `path` (`.` when there is none).
    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The names in `folder` that start with `prefix` (none when it cannot be read): for removing
    /// what a killed process left behind, where a folder that cannot be listed leaves nothing to do.
    static func fileNames(in folder: String, startingWith prefix: String) -> [String] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix(prefix) { names.append(name) }
        }
        return names
    }
}

/// `flock(2)`: `Glibc.flock` names the `struct flock` of `fcntl(2)`, and inside ``SystemCall`` the
/// bare name is its own wrapper.
private func flockFile(_ fd: Int32, _ operation: Int32) -> Int32 {
    flock(fd, operation)
}

extension timespec {
    /// A `timespec` of `duration` (which must not be negative).
    init(duration: Duration) {
        let parts = duration.components
        self.init(tv_sec: Int(parts.seconds), tv_nsec: Int(parts.attoseconds / 1_000_000_000))
    }
}
