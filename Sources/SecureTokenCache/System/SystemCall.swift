import Glibc

/// Thin, retrying wrappers around the POSIX calls the file store makes, turning failures into
/// ``TokenCacheError`` values that keep the call and `errno`.
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
            if fd >= 0 { return fd }
            if errno != EINTR { throw error("open", what) }
        }
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
            if fd >= 0 { return fd }
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
            var done = 0
            while done < count {
                let n = Glibc.pread(fd, buffer.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n < 0 {
                    if errno == EINTR { continue }
                    initialized = done
                    throw error("pread", what)
                }
                if n == 0 { break }
                done += n
            }
            initialized = done
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
            done += n
        }
    }

    /// `fsync`, retrying on EINTR.
    static func fsync(_ fd: Int32, _ what: String) throws {
        while Glibc.fsync(fd) != 0 {
            if errno != EINTR { throw error("fsync", what) }
        }
    }

    /// `ftruncate`, retrying on EINTR.
    static func ftruncate(_ fd: Int32, _ length: UInt64, _ what: String) throws {
        while Glibc.ftruncate(fd, off_t(length)) != 0 {
            if errno != EINTR { throw error("ftruncate", what) }
        }
    }

    /// `fstat` of an open descriptor.
    static func fstat(_ fd: Int32, _ what: String) throws -> stat {
        var info = stat()
        guard Glibc.fstat(fd, &info) == 0 else { throw error("fstat", what) }
        return info
    }

    /// `lstat` of a path, or `nil` if it does not exist.
    static func lstat(_ path: String, _ what: String) throws -> stat? {
        var info = stat()
        if Glibc.lstat(path, &info) == 0 { return info }
        if errno == ENOENT { return nil }
        throw error("lstat", what)
    }

    /// Makes a directory's entries durable (after a create or a rename in it).
    static func fsyncDirectory(_ path: String) throws {
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
        defer { unlink(temporary) }
        if Glibc.link(temporary, path) == 0 { return true }
        if errno == EEXIST { return false }
        throw error("link", what)
    }

    /// The whole content of an open file.
    static func readAll(_ fd: Int32, _ what: String) throws -> [UInt8] {
        let info = try fstat(fd, what)
        return try pread(fd, count: Int(info.st_size), at: 0, what)
    }

    /// The directory part of `path` (`.` when there is none).
    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
