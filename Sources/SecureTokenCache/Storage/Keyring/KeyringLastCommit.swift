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
/// that generation's copy, a newer one or none, never an older one. A file of another kind,
/// owner, mode or size is not used.
final class KeyringLastCommit: Sendable {
    /// The file's name in the group's coordination folder.
    static let fileName = "last-commit"
    /// The size of the file and its mapping.
    static let byteCount = 64 << 10
    /// The size of the word before the frames.
    static let headerByteCount = 8
    /// The most frame bytes a copy can hold; a larger transaction leaves no copy.
    static let capacity = byteCount - headerByteCount
    private static let countBits: UInt64 = 20

    private let mapping: SharedMapping
    private let word: UnsafeAtomic<UInt64>

    /// Maps (creating it if needed) the copy of the group whose coordination folder is
    /// `directory`, or returns `nil` if that cannot be done or the file there is not a regular
    /// file of this user with mode 0600 and the expected size: the store then works without it.
    init?(directory: GroupDirectory) {
        guard
            let mapping = try? SharedMapping(
                path: directory.file(Self.fileName), byteCount: Self.byteCount,
                initialBytes: [UInt8](repeating: 0, count: Self.byteCount), "mapping the last-commit copy")
        else { return nil }
        self.mapping = mapping
        word = mapping.word(at: 0)
    }

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
            (mapping.base + Self.headerByteCount).copyMemory(from: frames.baseAddress!, byteCount: frames.count)
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
                from: UnsafeRawBufferPointer(start: mapping.base + Self.headerByteCount, count: count))
            initialized = count
        }
        return (frames, value >> Self.countBits)
    }
}
