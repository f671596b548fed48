import Atomics
import Glibc

/// A copy of a KeyringStore group's newest transaction in a file every process that opened the
/// group maps `MAP_SHARED` (`last-commit` in the group's coordination folder, 64 KiB, 0600): a reader
/// one generation behind, the usual case after another process's write, catches up from it with
/// no system call, instead of reading the journal.
///
/// Like the journal, it is only a fast path and never needed for correctness. It holds exactly
/// the sealed frames the journal got for that transaction, and a reader authenticates them as it
/// would the journal's (``KeyringJournal/changes(inCopy:at:after:)``): a copy torn by a writer
/// overwriting it mid-read, a stale or damaged one, or one of another group only fails that check,
/// and the reader reads the journal instead.
///
/// Layout: one 64-bit word, `journal position << 20 | byte count` (0: no copy), then the frames.
/// One word, so a reader never pairs one transaction's length with another's position; the
/// frames themselves are checked, not trusted.
///
/// Only the lock holder writes it: it clears the word, writes the frames, sets the word, and then
/// (the caller) publishes the generation. So a reader that sees the counter at a generation finds
/// that generation's copy, a newer one or none, never an older one. The file is never shrunk while mapped (that would raise SIGBUS); a file of another
/// kind, owner or mode is not used.
final class KeyringLastCommit: @unchecked Sendable {
    /// The file's name in the group's coordination folder.
    static let fileName = "last-commit"
    /// The size of the file and its mapping.
    static let byteCount = 64 << 10
    /// The size of the word before the frames.
    static let headerByteCount = 8
    /// The most frame bytes a copy can hold; a larger transaction leaves no copy.
    static let capacity = byteCount - headerByteCount
    private static let countBits: UInt64 = 20

    private let mapping: UnsafeMutableRawPointer
    private let word: UnsafeAtomic<UInt64>

    /// Maps (creating it if needed) the copy of the group whose coordination folder is `directory`, or
    /// returns `nil` if that cannot be done or the file there is not a regular file of this user
    /// with mode 0600 (or stricter): the store then works without it.
    init?(directory: GroupDirectory) {
        let fd = open(directory.file(Self.fileName), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(), info.st_mode & 0o077 == 0
        else { return nil }
        // Growing a new file to its size is idempotent, so racing creators agree.
        if info.st_size < off_t(Self.byteCount), ftruncate(fd, off_t(Self.byteCount)) != 0 { return nil }
        guard let mapped = mmap(nil, Self.byteCount, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), mapped != MAP_FAILED else {
            return nil
        }
        mapping = mapped
        word = UnsafeAtomic(at: mapped.bindMemory(to: UInt64.AtomicRepresentation.self, capacity: 1))
    }

    deinit { munmap(mapping, Self.byteCount) }

    /// Makes `committed` the copy (lock holder only, before publishing its generation); with
    /// `nil`, or a transaction too large to copy, leaves no copy.
    func publish(_ committed: KeyringJournal.Committed?) {
        // No copy while the frames change. A reader that loaded the word before this copies torn
        // frames, which fail authentication, and reads the journal instead.
        word.store(0, ordering: .releasing)
        guard let committed, !committed.frames.isEmpty, committed.frames.count <= Self.capacity,
            committed.start < 1 << (64 - Self.countBits)
        else { return }
        committed.frames.withUnsafeBytes { frames in
            (mapping + Self.headerByteCount).copyMemory(from: frames.baseAddress!, byteCount: frames.count)
        }
        word.store(committed.start << Self.countBits | UInt64(committed.frames.count), ordering: .releasing)
    }

    /// A private copy of the frames of the newest transaction and where they start in the
    /// journal, or `nil` if there is no copy. Unchecked: the caller authenticates the frames.
    func read() -> (frames: [UInt8], start: UInt64)? {
        let value = word.load(ordering: .acquiring)
        let count = Int(value & (1 << Self.countBits - 1))
        guard count > 0, count <= Self.capacity else { return nil }
        let frames = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            UnsafeMutableRawBufferPointer(buffer).copyMemory(
                from: UnsafeRawBufferPointer(start: mapping + Self.headerByteCount, count: count))
            initialized = count
        }
        return (frames, value >> Self.countBits)
    }
}
