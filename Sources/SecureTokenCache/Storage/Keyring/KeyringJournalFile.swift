import Glibc

/// One open file of a group's change journal (see ``KeyringJournal``): its descriptor, the
/// generation its header says it starts after, and its identity on disk.
///
/// Shared by reference, so a reader can keep reading a journal a writer has just replaced (the
/// old file stays readable until the last descriptor closes); the identity tells a reader
/// whether the path still names the file it holds.
final class KeyringJournalFile: Sendable {
    /// The open descriptor (read-only for readers, read-write for the lock holder).
    let fd: Int32
    /// The generation the journal starts after: its first commit is generation `base + 1`.
    let base: UInt64
    /// The file's device and inode numbers.
    let identity: Identity

    /// Where a file is on disk: equal identities are the same file.
    struct Identity: Sendable, Equatable {
        /// `st_dev`.
        var device: UInt64
        /// `st_ino`.
        var inode: UInt64
    }

    /// Opens the journal at `path`, or returns `nil` if there is none, or it is not a regular
    /// file of this user with mode 0600 (or stricter), or its header is not a journal header.
    ///
    /// Never throws: a journal is only a fast path, so whatever is wrong with it only means
    /// not using it.
    init?(path: String, writable: Bool) {
        guard let fd = try? SystemCall.openPrivateFile(path, writable ? O_RDWR : O_RDONLY, "opening the journal") else {
            return nil
        }
        guard let info = try? SystemCall.fstat(fd, "checking the journal"),
            let header = try? SystemCall.pread(fd, count: KeyringJournal.headerByteCount, at: 0, "reading the journal"),
            let base = KeyringJournal.base(ofHeader: header)
        else {
            SystemCall.close(fd)
            return nil
        }
        self.fd = fd
        self.base = base
        identity = Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// Takes ownership of `fd`, a journal file just written with `base` in its header.
    init(adopting fd: Int32, base: UInt64) throws {
        let info: stat
        do {
            info = try SystemCall.fstat(fd, "checking the new journal")
        } catch {
            SystemCall.close(fd)
            throw error
        }
        self.fd = fd
        self.base = base
        identity = Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    deinit {
        SystemCall.close(fd)
    }

    /// The identity of the file `path` names now, or `nil` if it names none.
    static func identity(ofPath path: String) -> Identity? {
        guard let info = (try? SystemCall.lstat(path, "looking for the journal")) ?? nil else { return nil }
        return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// The file's current size, or `nil` if it cannot be inspected.
    func size() -> UInt64? {
        guard let info = try? SystemCall.fstat(fd, "checking the journal") else { return nil }
        return UInt64(info.st_size)
    }

    /// The bytes from `offset` to the end of the file (as long as it was when asked), or `nil`
    /// if they cannot be read.
    func bytes(from offset: UInt64) -> [UInt8]? {
        try? SystemCall.readToEnd(fd, from: offset, "reading the journal")
    }
}
