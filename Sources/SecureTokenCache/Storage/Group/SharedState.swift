import Atomics
import Glibc

/// A group's shared state page, `state` in the group's folder, mapped by every process that opens
/// the group (see ``SharedMapping``): the generation every store's readers compare with their
/// snapshot, and the file store's published log end.
///
/// Layout (32 bytes): `"STCSTATE"` ‖ generation u64 (bumped by every commit) ‖ commit word u64
/// (see ``CommitWord``; the file store's, zero for the keyring store) ‖ 8 zero bytes. Both words
/// are read and written with atomics, so a reader's freshness check is one atomic load and never
/// waits for a writer; only the lock holder stores.
final class SharedState: Sendable {
    /// The file's name in the group's folder.
    static let fileName = "state"
    /// The file's size.
    static let byteCount = 32
    static let magic = Array("STCSTATE".utf8)

    private let mapping: SharedMapping
    /// The file's path, for ``announce()``.
    private let path: String
    private let generation: UnsafeAtomic<UInt64>
    private let commitWord: UnsafeAtomic<UInt64>

    /// The initial contents of a state file: generation 0 and `word` (or a zero word).
    static func initialBytes(_ word: CommitWord?) -> [UInt8] {
        var bytes = magic
        RecordSealer.appendLE(UInt64(0), to: &bytes)
        RecordSealer.appendLE(word?.raw ?? 0, to: &bytes)
        bytes += [UInt8](repeating: 0, count: byteCount - bytes.count)
        return bytes
    }

    /// Maps the state file of the group in `directory`; with `creating`, a missing one is made
    /// first with ``initialBytes(_:)`` of no commit word (the keyring store's, which a process
    /// makes on first use).
    ///
    /// - Throws: ``TokenCacheError/Code/storeCorrupted`` if it has the wrong size or magic (the
    ///   file store quarantines it), and the errors of ``SharedMapping``.
    init(directory: GroupDirectory, creating: Bool = false) throws {
        let path = directory.file(Self.fileName)
        let mapping = try SharedMapping(
            path: path, byteCount: Self.byteCount, initialBytes: creating ? Self.initialBytes(nil) : nil,
            "mapping the group's state file \(path)")
        try Self.checkMagic(UnsafeRawBufferPointer(start: mapping.base, count: 8), path)
        self.mapping = mapping
        self.path = path
        generation = mapping.word(at: 8)
        commitWord = mapping.word(at: 16)
    }

    /// The generation: one atomic load.
    func loadGeneration() -> UInt64 {
        generation.load(ordering: .acquiring)
    }

    /// Adds one to the generation, announces it, and returns the new value (lock holder only).
    func bumpGeneration() -> UInt64 {
        defer { announce() }
        return generation.wrappingIncrementThenLoad(ordering: .releasing)
    }

    /// Publishes `value` as the generation and announces it (lock holder only, after the commit
    /// is durable).
    func storeGeneration(_ value: UInt64) {
        generation.store(value, ordering: .releasing)
        announce()
    }

    /// Tells watchers that a new generation is published: touches the file's times, which inotify
    /// reports as `IN_ATTRIB` on `state` (``GroupChangeWatcher``). Writes to the mapping raise no
    /// inotify event, and an event raised before the generation moved could wake a watcher that
    /// then finds nothing new and misses the commit.
    private func announce() {
        // Not reported: the generation is published already, so failing the writer now would
        // call a commit that happened a failure; a listener that misses this event still sees
        // the generation at its next look.
        try? SystemCall.touch(path, "announcing a commit")
    }

    /// The published commit word. Throws ``TokenCacheError/Code/storeCorrupted`` if it is damaged.
    func loadCommitWord() throws -> CommitWord {
        try Self.commitWord(commitWord.load(ordering: .acquiring))
    }

    /// The generation and the commit word of the state file of the group in `directory`, read
    /// without mapping it, changing it or touching its access time: for a check that must leave
    /// the group as it is.
    ///
    /// - Throws: ``TokenCacheError/Code/storeCorrupted`` for a file of the wrong size or magic, or
    ///   a damaged commit word; the errors of ``GroupDirectory/openFile(_:_:_:)``.
    static func read(in directory: GroupDirectory) throws -> (generation: UInt64, word: CommitWord) {
        let path = directory.file(fileName)
        let what = "reading the group's state file \(path)"
        let fd = try directory.openFile(fileName, O_RDONLY, what)
        defer { SystemCall.close(fd) }
        let bytes = try SystemCall.readAll(fd, what)
        try SharedMapping.checkSize(bytes.count, byteCount, path)
        try checkMagic(bytes.prefix(8), path)
        // The words as every process's atomics store them, in the machine's byte order.
        let words = bytes.withUnsafeBytes {
            ($0.loadUnaligned(fromByteOffset: 8, as: UInt64.self), $0.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        }
        return (words.0, try commitWord(words.1))
    }

    private static func checkMagic(_ bytes: some Sequence<UInt8>, _ path: String) throws {
        guard bytes.elementsEqual(magic) else {
            throw TokenCacheError(.storeCorrupted, "the group's state file \(path) is damaged (bad magic)")
        }
    }

    private static func commitWord(_ raw: UInt64) throws -> CommitWord {
        guard let word = CommitWord(raw: raw) else {
            throw TokenCacheError(.storeCorrupted, "the group's state file is damaged (commit word check failed)")
        }
        return word
    }

    /// Publishes a new commit word (lock holder only). With `durable`, also writes the page back
    /// to disk (after a compaction, so the new epoch survives a power loss).
    func publish(_ word: CommitWord, durable: Bool) {
        commitWord.store(word.raw, ordering: .releasing)
        // A failed sync is not reported: every process sees the word in the mapping already, and
        // a page that a power cut sends back to the previous epoch is repaired by the next open,
        // which adopts the log one epoch ahead.
        if durable { try? mapping.sync("writing the group's state file back") }
    }
}
