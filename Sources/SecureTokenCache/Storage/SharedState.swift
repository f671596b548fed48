import Atomics
import Glibc

/// A group's small shared state file, mapped `MAP_SHARED` by every process that opens the group.
///
/// Layout (32 bytes; the mapping covers one page, the rest of which reads as zeros): `"STCSTATE"` ‖
/// generation u64 (bumped by every commit) ‖ commit word u64 (see ``CommitWord``) ‖ 8 zero bytes. Both words are read and written with atomics, so a reader's
/// freshness check is one atomic load and never waits for a writer; only the lock holder stores.
///
/// The file must not be truncated while mapped (that would raise SIGBUS); the store never does,
/// and a file of the wrong size is refused before it is mapped.
final class SharedState: @unchecked Sendable {
    /// The file's size.
    static let byteCount = 32
    static let magic = Array("STCSTATE".utf8)

    private let base: UnsafeMutableRawPointer
    private let generation: UnsafeAtomic<UInt64>
    private let commitWord: UnsafeAtomic<UInt64>

    /// The initial contents of a new group's state file.
    static func initialBytes(_ word: CommitWord) -> [UInt8] {
        var bytes = magic
        RecordSealer.appendLE(UInt64(0), to: &bytes)
        RecordSealer.appendLE(word.raw, to: &bytes)
        bytes += [UInt8](repeating: 0, count: byteCount - bytes.count)
        return bytes
    }

    /// Maps the state file at `path`. Throws ``TokenCacheError/Code/storeCorrupted`` if it has the
    /// wrong size or magic (the caller quarantines it).
    init(path: String) throws {
        let fd = try SystemCall.open(path, O_RDWR | O_NOFOLLOW, 0, "opening the group's state file")
        defer { close(fd) }
        let info = try SystemCall.fstat(fd, "checking the group's state file")
        guard info.st_size == off_t(Self.byteCount) else {
            throw TokenCacheError(.storeCorrupted, "the group's state file has the wrong size (\(info.st_size) bytes)")
        }
        guard info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else {
            throw TokenCacheError(.insecurePermissions, "the group's state file must be owned by you with mode 0600")
        }
        guard let mapped = mmap(nil, Self.byteCount, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), mapped != MAP_FAILED else {
            throw SystemCall.error("mmap", "mapping the group's state file")
        }
        guard UnsafeRawBufferPointer(start: mapped, count: 8).elementsEqual(Self.magic) else {
            munmap(mapped, Self.byteCount)
            throw TokenCacheError(.storeCorrupted, "the group's state file is damaged (bad magic)")
        }
        base = mapped
        let words = (mapped + 8).bindMemory(to: UnsafeAtomic<UInt64>.Storage.self, capacity: 2)
        generation = UnsafeAtomic(at: words)
        commitWord = UnsafeAtomic(at: words + 1)
    }

    deinit {
        munmap(base, Self.byteCount)
    }

    /// The generation: one atomic load.
    func loadGeneration() -> UInt64 {
        generation.load(ordering: .acquiring)
    }

    /// Adds one to the generation and returns the new value (lock holder only).
    func bumpGeneration() -> UInt64 {
        generation.wrappingIncrementThenLoad(ordering: .releasing)
    }

    /// The published commit word. Throws ``TokenCacheError/Code/storeCorrupted`` if it is damaged.
    func loadCommitWord() throws -> CommitWord {
        guard let word = CommitWord(raw: commitWord.load(ordering: .acquiring)) else {
            throw TokenCacheError(.storeCorrupted, "the group's state file is damaged (commit word check failed)")
        }
        return word
    }

    /// Publishes a new commit word (lock holder only). With `durable`, also writes the page back
    /// to disk (after a compaction, so the new epoch survives a power loss).
    func publish(_ word: CommitWord, durable: Bool) {
        commitWord.store(word.raw, ordering: .releasing)
        if durable { msync(base, Self.byteCount, MS_SYNC) }
    }
}
