import Atomics
import Glibc

/// A small file of a group mapped `MAP_SHARED` by every process that opens the group: what a
/// reader checks with one atomic load and no system call. The one place where a group file is
/// mapped, so the checks (a regular file of this user, mode 0600, the expected size) are made
/// once for every such file.
///
/// The file is never shrunk while mapped (that would raise SIGBUS): a file of the wrong size is
/// refused before it is mapped. The mapping lives until `deinit`.
final class SharedMapping: @unchecked Sendable {
    /// The start of the mapping.
    let base: UnsafeMutableRawPointer
    /// The size of the file and of the mapping.
    let byteCount: Int

    /// Maps the file at `path`. With `initialBytes`, a missing file is first created holding
    /// them, written aside and linked into place so no process ever maps a half-written file
    /// (racing creators agree: one link wins, the others map it).
    ///
    /// - Throws: ``TokenCacheError/Code/storeCorrupted`` for a file of another size,
    ///   ``TokenCacheError/Code/insecurePermissions`` for one that is not a regular file of this
    ///   user with mode 0600, ``TokenCacheError/Code/ioFailure`` (or `.notFound`-like `ioFailure`
    ///   with ENOENT when the file is missing and nothing may be created).
    init(path: String, byteCount: Int, initialBytes: [UInt8]? = nil, _ what: String) throws {
        if let initialBytes, try SystemCall.lstat(path, what) == nil {
            try SystemCall.createFileWhole(path, initialBytes, what)
        }
        let fd = try SystemCall.openPrivateFile(path, O_RDWR, what)
        defer { SystemCall.close(fd) }
        let info = try SystemCall.fstat(fd, what)
        try Self.checkSize(Int(info.st_size), byteCount, path)
        base = try SystemCall.mmapShared(fd, byteCount: byteCount, what)
        self.byteCount = byteCount
    }

    deinit {
        SystemCall.munmap(base, byteCount)
    }

    /// Throws ``TokenCacheError/Code/storeCorrupted`` unless the file at `path`, of `size` bytes,
    /// has the size a mapping of `byteCount` bytes needs.
    static func checkSize(_ size: Int, _ byteCount: Int, _ path: String) throws {
        guard size == byteCount else {
            throw TokenCacheError(.storeCorrupted, "\(path) has the wrong size (\(size) bytes, not \(byteCount))")
        }
    }

    /// The 64-bit word at `offset` (a multiple of 8), for atomic loads and stores.
    func word(at offset: Int) -> UnsafeAtomic<UInt64> {
        precondition(offset % 8 == 0 && offset + 8 <= byteCount)
        return UnsafeAtomic(at: (base + offset).bindMemory(to: UnsafeAtomic<UInt64>.Storage.self, capacity: 1))
    }

    /// Writes the mapping back to the file and waits for it (so it survives a power loss).
    func sync(_ what: String) throws {
        try SystemCall.msync(base, byteCount, what)
    }
}
