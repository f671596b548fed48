import Glibc
import Synchronization

/// A KeyringStore group's sealed change journal, `journal` in the group's coordination folder
/// (``GroupDirectory/keyring(root:name:)``, 0700): it lets a process catch up with
/// another one's commit by reading a few kilobytes from a file instead of the whole records item
/// over D-Bus.
///
/// The records item stays the only source of truth. The journal is a cache of its recent
/// history and never needed for correctness: when it is missing, replaced, damaged, cut short or
/// does not reach far enough, the store reads the item instead. Nothing here throws for a bad
/// journal; it answers `nil` and the caller falls back.
///
/// Layout: a 16-byte header, `"STCJRN01" ‖ base generation u64le`, then ``LogFormat`` batch and
/// commit frames sealed by the group's ``RecordSealer``, exactly as in the FileStore's log. The
/// transaction that made generation `g` has the
/// commit sequence `g << 32`, its records `(g - 1) << 32 + 1, + 2, …`, and its commit names
/// `(g - 1) << 32` as the previous one; the first commit after the header names `base << 32`. So
/// the commit chain authenticates every generation number and the header's base, and a
/// journal's generations are contiguous.
///
/// - Writing (lock holder only): a transaction's batch frames are appended before the records
///   item is stored and its commit frame after, so a journal that ends with the commit frame of
///   generation `g` says the item is at `g`, and one that ends with batch frames says a writer
///   stopped in between (nobody trusts it then). A writer whose journal has passed ``sizeLimit``,
///   or does not end with the generation it starts from, starts a new one: a new file
///   (`O_EXCL`, 0600) whose base is that generation, renamed over the old one.
/// - Reading (no lock, no D-Bus): find where the commit frame of the reader's generation ends
///   (its cursor's position, checked; the header, when that generation is the base; else a walk
///   over the frame headers), then open what follows, keeping only complete, authenticated
///   transactions that continue the chain. A reader keeps its file open, so catching up with
///   another process's commit is one read of the new frames.
final class KeyringJournal: Sendable {
    /// The journal's file name in the group's coordination folder.
    static let fileName = "journal"
    /// The default size past which the next write starts a new journal (1 MiB).
    static let defaultSizeLimit = 1 << 20
    /// The size of the header.
    static let headerByteCount = 16
    /// The largest generation a journal records (sequence numbers are `generation << 32`).
    static let maximumGeneration = UInt64(UInt32.max)
    private static let magic = Array("STCJRN01".utf8)

    /// An open journal file; its header is the generation the journal starts after (its first
    /// commit is generation `header + 1`).
    typealias File = LogHandle<UInt64>

    /// The journal's path.
    let path: String
    /// The size past which the next write starts a new journal.
    let sizeLimit: UInt64
    private let sealer: RecordSealer
    /// The file the last read used, kept open for the next one.
    private let readerFile = Mutex<File?>(nil)

    /// The journal of the group whose coordination folder is `directory`, sealed by `sealer`.
    init(directory: GroupDirectory, sealer: RecordSealer, sizeLimit: Int = KeyringJournal.defaultSizeLimit) {
        path = directory.file(Self.fileName)
        self.sealer = sealer
        self.sizeLimit = UInt64(max(sizeLimit, 0))
    }

    /// The header of a journal that starts after generation `base`.
    static func header(base: UInt64) -> [UInt8] {
        var header = magic
        RecordSealer.appendLE(base, to: &header)
        return header
    }

    /// The base generation in a journal header, or `nil` if `bytes` is not one.
    static func base(ofHeader bytes: [UInt8]) -> UInt64? {
        guard bytes.count == headerByteCount, bytes[0..<8].elementsEqual(magic) else { return nil }
        let base = bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
        return base <= maximumGeneration ? base : nil
    }

    // MARK: Reading

    /// What a journal file holds after one generation's commit.
    struct Tail {
        /// The complete transactions that continue the chain, in order, and their changes: the
        /// first made the generation after the one asked for.
        var log: ScannedLog
        /// Where the generation asked for ends (its commit frame, or the header).
        var start: UInt64
        /// Where the last of the transactions ends (``start`` when there are none).
        var end: UInt64
        /// Whether ``end`` is the end of the file: nothing torn, pending or damaged follows.
        var reachesEnd: Bool

        /// How many transactions follow the generation asked for.
        var transactionCount: Int { log.transactions.count }

        /// The changes of the first `count` transactions, in order.
        func changes(ofFirst count: Int) -> [RecordChange] {
            Array(log.changes(ofFirst: count))
        }
    }

    /// The changes that made the generations after `generation` up to `target`, and the position
    /// just after `target`'s commit; `nil` when the journal cannot tell (then read the item).
    ///
    /// `position` is where the caller last found `generation` to end (a cursor's position); it
    /// is checked, never trusted. Reads the file the last call used first, and if that one does
    /// not reach `target` (a writer has started a new journal since), the file the path names
    /// now.
    func changes(
        after generation: UInt64, hint position: UInt64, through target: UInt64
    ) -> (changes: [RecordChange], position: UInt64)? {
        guard target > generation else { return nil }
        let cached = readerFile.withLock { $0 }
        if let cached, let found = changes(in: cached, after: generation, hint: position, through: target) {
            return found
        }
        guard let current = currentReaderFile(), current !== cached else { return nil }
        return changes(in: current, after: generation, hint: position, through: target)
    }

    /// ``changes(after:hint:through:)`` in one given file.
    func changes(
        in file: File, after generation: UInt64, hint position: UInt64, through target: UInt64
    ) -> (changes: [RecordChange], position: UInt64)? {
        guard target > generation, let tail = tail(of: file, after: generation, hint: position) else { return nil }
        let count = Int(clamping: target - generation)
        guard tail.transactionCount >= count else { return nil }
        return (tail.changes(ofFirst: count), tail.log.transactions[count - 1].end)
    }

    /// Where the commit of `generation` ends in the journal the path names now, or 0 if it holds
    /// no such commit (0 is never a position in a journal, so a cursor with it reads by walking).
    func position(of generation: UInt64) -> UInt64 {
        guard let file = currentReaderFile(), let located = locate(generation, in: file, hint: 0) else { return 0 }
        return located.bytesStart + UInt64(located.start)
    }

    /// The complete transactions `file` holds after the commit of `generation`, or `nil` if it
    /// holds no such commit.
    func tail(of file: File, after generation: UInt64, hint position: UInt64) -> Tail? {
        guard let located = locate(generation, in: file, hint: position) else { return nil }
        return tail(of: located, after: generation)
    }

    /// The complete transactions in `located` after the commit of `generation`, which ends at
    /// `located.start`.
    private func tail(of located: Located, after generation: UInt64) -> Tail {
        let sequence = generation << 32
        var scanner = LogScanner(sealer: sealer, lastSequence: sequence, lastCommit: sequence)
        let start = located.bytesStart + UInt64(located.start)
        // Lenient: a torn or pending append (a writer at work) or damage only ends the chain.
        var scanned =
            (try? located.bytes.withUnsafeBytes {
                try scanner.scan(UnsafeRawBufferPointer(rebasing: $0[located.start...]), base: start, lenient: true)
            }) ?? .empty
        let continuing = scanned.transactions.enumerated().prefix {
            $0.element.commitSequence == (generation + UInt64($0.offset) + 1) << 32
        }.count
        scanned.keepFirst(continuing)
        let end = scanned.end ?? start
        return Tail(log: scanned, start: start, end: end, reachesEnd: end == located.bytesStart + UInt64(located.bytes.count))
    }

    /// Bytes of a journal file from `bytesStart` to its end, and the index in them where the
    /// commit of a generation ends.
    private struct Located {
        var bytes: [UInt8]
        var bytesStart: UInt64
        var start: Int
    }

    /// Finds where the commit of `generation` ends in `file`: at `position` if the frame there
    /// is that commit (one read of the tail from there), at the header if `generation` is the
    /// file's base, else by walking the frames from the header (no record is opened; the
    /// caller's scan authenticates the chain from there).
    private func locate(_ generation: UInt64, in file: File, hint position: UInt64) -> Located? {
        guard generation >= file.header, generation <= Self.maximumGeneration else { return nil }
        let commitBytes = LogFormat.commitFrameByteCount
        let headerEnd = UInt64(Self.headerByteCount)
        let sequence = generation << 32
        if position >= headerEnd + UInt64(commitBytes), let bytes = Self.bytes(of: file, from: position - UInt64(commitBytes)),
            bytes.withUnsafeBytes({ LogFormat.sequenceOfCommitFrame(endingAt: commitBytes, in: $0) }) == sequence
        {
            return Located(bytes: bytes, bytesStart: position - UInt64(commitBytes), start: commitBytes)
        }
        guard let bytes = Self.bytes(of: file, from: headerEnd) else { return nil }
        if generation == file.header { return Located(bytes: bytes, bytesStart: headerEnd, start: 0) }
        guard let end = bytes.withUnsafeBytes({ Self.endOfCommit(sequence, in: $0) }) else { return nil }
        return Located(bytes: bytes, bytesStart: headerEnd, start: end)
    }

    /// Where the commit frame with `sequence` ends in `frames` (a run of frames from its start),
    /// following the frames' lengths only; `nil` if there is none before the frames stop parsing.
    private static func endOfCommit(_ sequence: UInt64, in frames: UnsafeRawBufferPointer) -> Int? {
        var offset = 0
        while frames.count - offset >= 5 {
            let length = Int(UInt32(littleEndian: frames.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            guard length >= 1, length <= LogFormat.maximumFrameByteCount, length <= frames.count - offset - 4 else { return nil }
            let end = offset + 4 + length
            if frames[offset + 4] == LogFormat.commitFrame, LogFormat.sequenceOfCommitFrame(endingAt: end, in: frames) == sequence
            {
                return end
            }
            offset = end
        }
        return nil
    }

    /// The bytes of `file` from `offset` to its end, or `nil` if they cannot be read.
    private static func bytes(of file: File, from offset: UInt64) -> [UInt8]? {
        try? file.bytes(from: offset, "reading the journal")
    }

    /// The journal file the path names now: the reader's open one if it is still that file,
    /// else the new one (kept for the next read); `nil` if there is none or it is unusable.
    private func currentReaderFile() -> File? {
        let cached = readerFile.withLock { $0 }
        if let cached, (try? File.identity(ofPath: path, "looking for the journal")) == cached.identity { return cached }
        let file = openFile(writable: false)
        readerFile.withLock { $0 = file }
        return file
    }

    /// Opens the journal, or returns `nil` if there is none, or it is not a regular file of this
    /// user with mode 0600 (or stricter), or its header is not a journal header.
    ///
    /// Never throws: a journal is only a fast path, so whatever is wrong with it only means not
    /// using it.
    func openFile(writable: Bool) -> File? {
        guard let fd = try? SystemCall.openPrivateFile(path, writable ? O_RDWR : O_RDONLY, "opening the journal") else {
            return nil
        }
        guard let header = try? SystemCall.pread(fd, count: Self.headerByteCount, at: 0, "reading the journal"),
            let base = Self.base(ofHeader: header)
        else {
            SystemCall.close(fd)
            return nil
        }
        return try? File(adopting: fd, header: base, "checking the journal")
    }

    // MARK: Writing (lock holder only)

    /// A transaction whose batch frames are in the journal and whose commit frame is not yet.
    struct Pending {
        /// The journal file it is written to.
        let file: File
        /// The generation the transaction makes.
        let generation: UInt64
        /// Its number of changes.
        let count: Int
        /// Where its batch frames start.
        let recordsStart: UInt64
        /// Its batch frames, as written.
        let frames: [UInt8]
    }

    /// The journal file for the lock holder to append to, or `nil` if there is none (or it is
    /// unusable).
    func openForWriting() -> File? {
        openFile(writable: true)
    }

    /// Where `file` ends if it ends exactly with the commit of `generation` (or is just a header
    /// with `generation` as its base): there the next transaction can be appended. `nil`
    /// otherwise (then the next write starts a new journal).
    func appendPosition(in file: File, after generation: UInt64) -> UInt64? {
        let headerEnd = UInt64(Self.headerByteCount)
        let commitBytes = UInt64(LogFormat.commitFrameByteCount)
        guard let size = try? file.size("checking the journal"), generation <= Self.maximumGeneration else { return nil }
        if size == headerEnd { return file.header == generation ? size : nil }
        guard size >= headerEnd + commitBytes, let last = Self.bytes(of: file, from: size - commitBytes),
            last.count == Int(commitBytes),
            last.withUnsafeBytes({ LogFormat.sequenceOfCommitFrame(endingAt: Int(commitBytes), in: $0) }) == generation << 32
        else { return nil }
        return size
    }

    /// Writes the batch frames of the transaction that makes `generation` (call before storing
    /// the records item): appended to `file` at `end` (where it ends with the previous
    /// generation's commit), or, when `end` is `nil` or the journal has passed ``sizeLimit``, into
    /// a new journal renamed over the old one. Returns `nil` when the journal could not be
    /// written; it was removed then, so nobody takes it for the item's state.
    ///
    /// - Throws: ``TokenCacheError/Code/ioFailure`` only if the journal could be neither
    ///   written nor removed: it would claim the item is still at the previous generation, so
    ///   the transaction must not go ahead.
    func begin(
        _ changes: [RecordChange], generation: UInt64, appendingTo file: File?, at end: UInt64?
    ) throws -> Pending? {
        guard generation >= 1, generation <= Self.maximumGeneration, changes.count < Int(UInt32.max) else {
            try remove()
            return nil
        }
        var frames: [UInt8] = []
        do {
            _ = try LogFormat.appendBatchFrames(
                changes, firstSequence: (generation - 1) << 32 + 1, sealer: sealer, to: &frames)
            if let file, let end, end < sizeLimit {
                try frames.withUnsafeBytes { try SystemCall.pwrite(file.fd, $0, at: end, "appending to the journal") }
                return Pending(file: file, generation: generation, count: changes.count, recordsStart: end, frames: frames)
            }
            let started = try startJournal(base: generation - 1, frames: frames)
            return Pending(
                file: started, generation: generation, count: changes.count, recordsStart: UInt64(Self.headerByteCount),
                frames: frames)
        } catch {
            try remove()
            return nil
        }
    }

    /// A transaction whose commit frame is in the journal.
    struct Committed {
        /// Where its frames start.
        let start: UInt64
        /// Its batch frames and commit frame, as written.
        let frames: [UInt8]

        /// Where its commit frame ends: the position of the generation it made.
        var end: UInt64 { start + UInt64(frames.count) }
    }

    /// Appends the commit frame of `pending` (call after the records item was stored, before
    /// publishing its generation). Returns the whole
    /// transaction as written, or `nil` if the commit frame could not be written (the journal is
    /// removed then, if it can be; else its unfinished transaction keeps anyone from trusting
    /// it).
    func commit(_ pending: Pending) -> Committed? {
        var bytes = pending.frames
        do {
            try LogFormat.appendCommitFrame(
                sequence: pending.generation << 32, count: pending.count, previousCommit: (pending.generation - 1) << 32,
                recordsStart: 0, sealer: sealer, to: &bytes)
            let commit = bytes[pending.frames.count...]
            try commit.withUnsafeBytes {
                try SystemCall.pwrite(
                    pending.file.fd, $0, at: pending.recordsStart + UInt64(pending.frames.count), "appending to the journal")
            }
        } catch {
            try? remove()
            return nil
        }
        return Committed(start: pending.recordsStart, frames: bytes)
    }

    /// Takes `pending`'s batch frames out again (the records item was not stored), so the
    /// journal ends with the previous generation's commit as before. If that fails, the
    /// unfinished transaction stays and keeps anyone from trusting the journal.
    func abandon(_ pending: Pending) {
        try? SystemCall.ftruncate(pending.file.fd, pending.recordsStart, "taking an abandoned transaction out of the journal")
    }

    /// Writes a new journal with `base` and `frames` after its header (`journal.new`, `O_EXCL`,
    /// 0600) and renames it over the old one. No `fsync`: the journal is a cache of the durable
    /// item, checked on every read, so one that a power cut damaged is only read around.
    private func startJournal(base: UInt64, frames: [UInt8]) throws -> File {
        let temporary = path + ".new"
        SystemCall.removeLeftover(temporary)  // of a writer that died here; we hold the lock
        let fd = try SystemCall.open(temporary, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600, "creating a new journal")
        let file = try File(adopting: fd, header: base, "checking the new journal")
        do {
            try (Self.header(base: base) + frames).withUnsafeBytes {
                try SystemCall.pwrite(fd, $0, at: 0, "writing a new journal")
            }
            try SystemCall.rename(temporary, path, "replacing the journal")
        } catch {
            SystemCall.removeLeftover(temporary)
            throw error
        }
        return file
    }

    /// Removes the journal, so that nobody reads it as the item's state.
    ///
    /// - Throws: ``TokenCacheError/Code/ioFailure`` if it exists and cannot be removed.
    func remove() throws {
        try SystemCall.unlink(path, "removing the journal")
    }
}
