import Glibc

/// An open file of a sealed log (the file store's log, the keyring store's journal), what its
/// header says, and its identity on disk.
///
/// Shared by reference, so a reader can keep reading a log that a writer has just replaced by a
/// new file (the old one stays readable until its last descriptor closes); the identity tells a
/// reader whether the path still names the file it holds. `Header` is what its owner needs from
/// the file's header: the file store's epoch, the journal's base generation.
final class LogHandle<Header: Sendable>: Sendable {
    /// The open descriptor (read-write when the lock holder appends through it).
    let fd: Int32
    /// What the file's header says.
    let header: Header
    /// The file's device and inode numbers.
    let identity: Identity

    /// Where a file is on disk: equal identities are the same file.
    struct Identity: Sendable, Equatable {
        /// `st_dev`.
        var device: UInt64
        /// `st_ino`.
        var inode: UInt64

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    /// Takes ownership of `fd`, a log file whose header says `header` (closed if this throws).
    ///
    /// - Throws: the errors of ``SystemCall/fstat(_:_:)``.
    init(adopting fd: Int32, header: Header, _ what: String) throws {
        do {
            identity = Identity(try SystemCall.fstat(fd, what))
        } catch {
            SystemCall.close(fd)
            throw error
        }
        self.fd = fd
        self.header = header
    }

    deinit {
        SystemCall.close(fd)
    }

    /// The identity of the file `path` names now, or `nil` if it names none.
    static func identity(ofPath path: String, _ what: String) throws -> Identity? {
        try SystemCall.lstat(path, what).map(Identity.init)
    }

    /// The file's current size.
    func size(_ what: String) throws -> UInt64 {
        UInt64(try SystemCall.fstat(fd, what).st_size)
    }

    /// The bytes from `offset` to the end of the file, as long as it was when asked.
    func bytes(from offset: UInt64, _ what: String) throws -> [UInt8] {
        try SystemCall.readToEnd(fd, from: offset, what)
    }
}
