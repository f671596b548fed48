import Atomics
import Glibc

/// A group's shared generation counter: 8 bytes in a file mapped `MAP_SHARED`, so every process
/// that opened the group sees a commit's bump with one atomic load and no system call.
///
/// Only writers holding the group lock store to it; readers just load. The mapping lives until
/// `deinit`.
final class KeyringGenerationCounter: @unchecked Sendable {
    private let mapping: UnsafeMutableRawPointer
    private let atomic: UnsafeAtomic<UInt64>

    /// Maps (creating it if needed) the counter file of the group whose folder is `directory`.
    ///
    /// - Throws: ``TokenCacheError/Code/ioFailure`` if the file cannot be created or mapped,
    ///   ``TokenCacheError/Code/insecurePermissions`` if it is not a regular file of this user.
    init(directory: GroupDirectory) throws {
        let path = directory.file("generation")
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw TokenCacheError(
                .ioFailure, "cannot open the generation counter \(path)", underlying: .posix(call: "open", errno: errno))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw TokenCacheError(.ioFailure, "cannot inspect \(path)", underlying: .posix(call: "fstat", errno: errno))
        }
        guard info.st_mode & S_IFMT == S_IFREG, info.st_uid == getuid() else {
            throw TokenCacheError(.insecurePermissions, "\(path) must be a regular file owned by this user")
        }
        // Growing an empty file to 8 zero bytes is idempotent, so racing creators agree.
        if info.st_size < 8, ftruncate(fd, 8) != 0 {
            throw TokenCacheError(.ioFailure, "cannot size \(path)", underlying: .posix(call: "ftruncate", errno: errno))
        }
        guard let mapped = mmap(nil, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), mapped != MAP_FAILED else {
            throw TokenCacheError(.ioFailure, "cannot map \(path)", underlying: .posix(call: "mmap", errno: errno))
        }
        mapping = mapped
        let storage = mapped.bindMemory(to: UInt64.AtomicRepresentation.self, capacity: 1)
        atomic = UnsafeAtomic<UInt64>(at: storage)
    }

    deinit { munmap(mapping, 8) }

    /// The current generation: one atomic load.
    func load() -> UInt64 { atomic.load(ordering: .acquiring) }

    /// Publishes `generation` (call with the group lock held, after the commit is durable).
    func store(_ generation: UInt64) { atomic.store(generation, ordering: .releasing) }
}
