import Glibc
import Logging
import Synchronization

/// A group stored as a sealed, append-only log in a `0700` directory: the fallback when no Secret
/// Service is reachable, and the choice for large caches.
///
/// Files in `<root>/<group>/`: `header` (format, key source, key check; see ``GroupHeader``),
/// `log` (sealed batches of records and commit frames; see ``LogFormat``), `state` (the shared
/// generation counter and the published log length; see ``SharedState``), `lock` (the write
/// lock; see ``FileLock``), `refresh-*.lock` (the refresh locks; see ``RefreshLock``) and, once damage was found, `quarantine/`.
///
/// - A write is a transaction under the group lock: catch up, append the transaction's records as
///   batch frames (one sealed box per batch) and a commit frame in one write, `fsync`, publish the
///   new length, bump the generation. A failed write (disk full, file-size limit) is cut off
///   again: nothing of it survives.
/// - Readers never lock: they read the published length and the log up to it, so they only ever
///   see complete transactions, and after a change only the new tail.
/// - When the dead records (replaced or deleted ones, and the deletes themselves) reach
///   `max(compactionMinimumDead, live / 4)` (see ``compactionLiveDivisor``), the commit also
///   compacts: the whole log is opened, the last version of every live record is sealed again as
///   batch frames of a new log with one commit (`O_EXCL`, `0600`, `fsync`), renamed over the old
///   one, the directory synced, and the epoch bumped, which makes readers reload. The quarter keeps a log within about 1.25 times
///   its live records (plus the minimum), and so the time to open it; a group that only grows
///   has nothing to reclaim and does not compact. The writer tells live records from dead ones
///   by their 64-bit name hashes (computed as batches open), so opening a group only hands it an
///   array, and it keeps no sealed frame or offset: compaction reads what it needs.
/// - Bytes past the published length are an unfinished append: the next writer (or the next
///   process to open the group) keeps any complete, authenticated transactions there (a writer
///   killed inside or after its `fsync`, or a state page lost to a power cut), syncs and
///   publishes them, and cuts the torn rest. So a transaction may become visible although its
///   writer never returned; one that returned is never lost. Inside the published length,
///   anything that fails to parse or open is damage:
///   the group fails with ``TokenCacheError/Code/storeCorrupted`` and the file is copied to
///   `quarantine/`, never deleted and never read as an empty or shorter cache.
/// - A compaction whose writer died between its rename and publishing the new epoch is finished
///   by the next process that finds the lock free.
/// - ``changes()`` streams inotify events for commits by any process (this one included).
final class FileStore: CacheStore {
    /// How long a write waits for another process's lock by default.
    static let defaultLockTimeout = Duration.seconds(5)
    /// Compaction waits for the dead records to reach the live ones divided by this. Every small
    /// transaction left in a log costs each later open two boxes (its batch and its commit), and
    /// every compaction seals the whole group again and syncs it. A quarter keeps both costs
    /// small: a group refreshed one response at a time compacts only after many writes, and an
    /// open never replays more than a quarter of the group's size in dead records.
    static let compactionLiveDivisor = 4

    let storeDescription: StoreDescription
    /// The group's directory.
    let directory: GroupDirectory
    var groupDirectory: GroupDirectory? { directory }
    /// How long a write waits for the lock.
    let lockTimeout: Duration
    /// Compaction needs at least this many dead records (and at least a quarter as many as live
    /// ones).
    let compactionMinimumDead: Int

    private let sealer: RecordSealer
    private let groupID: [UInt8]
    private let state: SharedState
    private let lock: FileLock
    /// An open file of the group's log; its header names the log's epoch.
    typealias Log = LogHandle<UInt16>

    private let readerLog = Mutex<Log?>(nil)
    private let writer = Mutex(WriterState())
    private let failure = Mutex<TokenCacheError?>(nil)
    private let logger: Logger

    /// What the lock holder knows about the log: where it ends, and how many of its records are
    /// live and dead, which decides when to compact. No record is kept: compaction opens the log.
    private struct WriterState {
        var handle: Log?
        /// The offset up to which the log has been scanned (0: nothing yet).
        var position: UInt64 = 0
        var lastSequence: UInt64 = 0
        var lastCommit: UInt64 = 0
        /// The ``RecordNameHash`` of every live record: what identifies a record here. Built on
        /// the first write from ``loadedLiveHashes``, so opening a group does no per-record work
        /// for the writer. Two names with one 64-bit hash (vanishingly rare) would
        /// only shift when compaction runs: it opens and deduplicates by full name.
        var liveHashes: Set<UInt64>? = []
        /// The live records' hashes as a load found them, until ``liveHashes`` is needed.
        var loadedLiveHashes: [UInt64] = []
        /// Records in the log that a later change replaced or deleted, and deletes.
        var deadCount = 0

        /// A writer at the start of the log `handle` (before its first transaction).
        init(handle: Log? = nil) {
            self.handle = handle
            position = handle == nil ? 0 : UInt64(LogFormat.headerByteCount)
        }

        /// The number of live records.
        var liveCount: Int { liveHashes?.count ?? loadedLiveHashes.count }

        /// Whether dead records are enough, and a large enough share, to compact with this commit.
        func wantsCompaction(minimumDead: Int) -> Bool {
            deadCount >= max(minimumDead, liveCount / FileStore.compactionLiveDivisor)
        }

        /// Takes over what a load of the whole log up to `transactions.last` found: the hashes of
        /// its live records and how many changes it holds in all.
        mutating func adoptLoad(_ transactions: [ScannedTransaction], liveHashes hashes: [UInt64], changeCount: Int) {
            guard let last = transactions.last else { return }
            position = last.end
            lastSequence = last.commitSequence
            lastCommit = last.commitSequence
            liveHashes = nil
            loadedLiveHashes = hashes
            deadCount = changeCount - hashes.count
        }

        /// Notes committed changes (whose name hashes are `hashes`) that end at `end` with a
        /// commit of `commitSequence`.
        mutating func note(
            _ changes: some Sequence<RecordChange>, hashes: some Sequence<UInt64>, end: UInt64, commitSequence: UInt64
        ) {
            var live = liveHashes ?? Set(loadedLiveHashes)
            liveHashes = nil
            loadedLiveHashes = []
            for (change, hash) in zip(changes, hashes) {
                switch change {
                case .put: if !live.insert(hash).inserted { deadCount += 1 }
                case .delete:
                    if live.remove(hash) != nil { deadCount += 1 }
                    deadCount += 1
                }
            }
            liveHashes = live
            position = end
            lastSequence = commitSequence
            lastCommit = commitSequence
        }
    }

    /// Opens the group `name` under `root` (default ``GroupDirectory/defaultRoot()``), creating it
    /// with a key from `keyProvider` if it does not exist.
    ///
    /// Throws ``TokenCacheError`` with `.wrongKey` (the key does not open this group),
    /// `.insecurePermissions` (symlink, foreign owner, group/world writable), `.storeCorrupted`
    /// (damaged header or state; a copy is quarantined), `.unsupportedFormat`, or `.ioFailure`.
    init(
        group name: String,
        keyProvider: any KeyProvider,
        root: String? = nil,
        lockTimeout: Duration = FileStore.defaultLockTimeout,
        compactionMinimumDead: Int = 64,
        logger: Logger = .discarding
    ) throws {
        self.logger = logger
        directory = try GroupDirectory(root: root ?? GroupDirectory.defaultRoot(), name: name)
        self.lockTimeout = lockTimeout
        self.compactionMinimumDead = compactionMinimumDead
        var created: RecordSealer? = nil
        if try SystemCall.lstat(directory.path, "looking for the group directory") == nil {
            created = try directory.create(keyProvider: keyProvider)
        }
        try directory.checkSecure()

        let header = try GroupHeader.read(in: directory) { [directory] in
            Self.quarantined($0, file: "header", in: directory, logger: logger)
        }
        let sealer =
            try created
            ?? RecordSealer(
                groupKey: keyProvider.key(for: header.keySource, groupID: header.groupID, groupName: name),
                groupName: name
            )
        try header.requireKey(sealer, groupName: name)
        self.sealer = sealer
        groupID = header.groupID
        do {
            state = try SharedState(directory: directory)
        } catch let error as TokenCacheError where error.code == .storeCorrupted {
            throw Self.quarantined(error, file: "state", in: directory, logger: logger)
        }
        lock = FileLock(path: directory.file("lock"), purpose: "the group \(name)", logger: logger)
        storeDescription = StoreDescription(
            kind: .file,
            location: directory.path,
            protection: header.keySource.protectionLevel,
            reason: "a file store was requested",
            coordinationDirectory: directory.path
        )
        // Check the log now (ownership, mode, header), so a bad group fails at open, not later.
        let (word, handle) = try currentLog()
        if try handle.size("checking the group log") > word.length {
            // Usually a writer between its append and publishing (then this waits for it); after
            // a crash, transactions to adopt. A busy lock only postpones this to the next write.
            do {
                try publishUnpublishedTail()
            } catch let error as TokenCacheError where error.code == .lockTimeout {}
        }
    }

    // MARK: Reading

    func currentGeneration() -> UInt64 { state.loadGeneration() }

    func load() throws -> ([Record], StoreCursor) {
        try checkHealthy()
        let generation = state.loadGeneration()
        let (word, handle) = try currentLog()
        let loaded = try loadAll(handle, length: word.length)
        // Hand where the log ends and what is live in it to the writer side (unless a write is
        // running), so the first write after opening does not open the log again. Only arrays
        // change hands here; the writer builds its set on its first write.
        _ = writer.withLockIfAvailable { writer in
            guard writer.handle?.epoch != handle.epoch || writer.position < word.length else { return }
            var seeded = WriterState(handle: handle)
            seeded.adoptLoad(loaded.transactions, liveHashes: loaded.liveHashes, changeCount: loaded.changeCount)
            writer = seeded
        }
        return (loaded.records, StoreCursor(generation: generation, epoch: UInt64(word.epoch), position: word.length))
    }

    func update(since cursor: StoreCursor) throws -> StoreUpdate {
        try checkHealthy()
        let generation = state.loadGeneration()
        // Every path below that reads the log checks it got the committed bytes, so the size
        // check (one more system call per catch-up) would only repeat that.
        let (word, handle) = try currentLog(checkingLength: false)
        let now = StoreCursor(generation: generation, epoch: UInt64(word.epoch), position: word.length)
        if cursor.epoch != now.epoch || cursor.position < UInt64(LogFormat.headerByteCount) || cursor.position > word.length {
            return .reload(try loadAll(handle, length: word.length).records, now)
        }
        if cursor.position == word.length { return .unchanged(now) }
        guard let log = try tail(handle, from: cursor.position, to: word.length) else {
            // Not a transaction boundary of this log: a cursor from elsewhere. Start over.
            return .reload(try loadAll(handle, length: word.length).records, now)
        }
        return .changes(log.changes, now)
    }

    /// The published commit word and an open log of its epoch. Retries while a compaction is
    /// being published (the renamed file appears just before its epoch does), and finishes the
    /// publication of a compaction whose writer died between its rename and publishing.
    private func currentLog(holdingLock: Bool = false, checkingLength: Bool = true) throws -> (CommitWord, Log) {
        var previous: CommitWord? = nil
        var stable = 0
        for attempt in 0..<400 {
            let word = try guarded("state") { try state.loadCommitWord() }
            stable = word == previous ? stable + 1 : 0
            previous = word
            // The lock holder appends only to the file the path names: a compaction whose writer
            // died between its rename and publishing its epoch left the state naming this epoch
            // and the path naming the compacted log, and an append to the old file, unlinked,
            // would be lost to every process once the compacted log is adopted.
            if let handle = readerLog.withLock({ $0 }), handle.epoch == word.epoch,
                try !holdingLock || Log.identity(ofPath: directory.file("log"), "finding the group log") == handle.identity
            {
                if checkingLength { try checkLength(handle, word) }
                return (word, handle)
            }
            let handle = try openLog()
            if handle.epoch == word.epoch {
                readerLog.withLock { $0 = handle }
                if checkingLength { try checkLength(handle, word) }
                return (word, handle)
            }
            if handle.epoch == word.epoch &+ 1 {
                if holdingLock { return try adoptCompactedLog(handle) }
                if attempt >= 5, let repaired = try writer.withLockIfAvailable({ _ in try repairCompaction(word, handle) }),
                    let repaired
                {
                    return repaired
                }
            } else if stable >= 5 {
                throw fail(Self.epochMismatch, "log")
            }
            if attempt < 5 { SystemCall.yieldThread() } else { SystemCall.sleep(for: .milliseconds(1)) }
        }
        throw TokenCacheError(.ioFailure, "the group's log is being replaced by another process for too long; retry")
    }

    /// Takes the group lock if it is free and, if the state still names the old log, publishes
    /// the compacted one. `nil` when someone else holds the lock (they will do it).
    private func repairCompaction(_ word: CommitWord, _ handle: Log) throws -> (CommitWord, Log)? {
        try lock.withLockIfFree {
            guard try state.loadCommitWord() == word else { return nil }
            return try adoptCompactedLog(handle)
        } ?? nil
    }

    /// Publishes a compacted log left unpublished by a writer that died after renaming it into
    /// place (it was synced before the rename, so it is complete), or whose sync of the folder
    /// failed: the folder is synced first, so that the epoch published durably is never one a
    /// power cut can take the log of away. Lock holder only.
    private func adoptCompactedLog(_ handle: Log) throws -> (CommitWord, Log) {
        try SystemCall.fsyncDirectory(directory.path, sync: .compactionRename)
        let bytes = try SystemCall.readAll(handle.fd, "reading the group log")
        var scanner = LogScanner(sealer: sealer, lastSequence: 0, lastCommit: 0)
        let log = try scanner.scan(bytes, from: LogFormat.headerByteCount, to: bytes.count, lenient: true)
        guard let end = log.end else { throw fail(Self.compactedWithoutTransaction, "log") }
        if UInt64(bytes.count) > end { try SystemCall.ftruncate(handle.fd, end, "cutting a torn append off the group log") }
        let word = CommitWord(epoch: handle.epoch, length: end)
        state.publish(word, durable: true)
        _ = state.bumpGeneration()
        readerLog.withLock { $0 = handle }
        return (word, handle)
    }

    private func checkLength(_ handle: Log, _ word: CommitWord) throws {
        let info = try SystemCall.fstat(handle.fd, "checking the group log")
        guard UInt64(info.st_size) >= word.length else { throw fail(Self.shorterLog(UInt64(info.st_size), word), "log") }
    }

    private func openLog() throws -> Log {
        let fd = try directory.openFile("log", O_RDWR, "opening the group log")
        let bytes: [UInt8]
        do {
            bytes = try SystemCall.pread(fd, count: LogFormat.headerByteCount, at: 0, "reading the group log")
        } catch {
            SystemCall.close(fd)
            throw error
        }
        guard let epoch = LogFormat.epoch(ofHeader: bytes, groupID: groupID) else {
            SystemCall.close(fd)
            throw fail(Self.damagedLogHeader, "log")
        }
        return try Log(adopting: fd, header: epoch, "checking the group log")
    }

    /// Reads and opens the whole committed log: its live records and their name hashes, its
    /// transactions, and how many changes they hold.
    private func loadAll(
        _ handle: Log, length: UInt64
    ) throws -> (records: [Record], liveHashes: [UInt64], transactions: [ScannedTransaction], changeCount: Int) {
        let bytes = try SystemCall.pread(handle.fd, count: Int(length), at: 0, "reading the group log")
        guard bytes.count == Int(length) else {
            throw fail(TokenCacheError(.storeCorrupted, "the group's log is shorter than its committed length"), "log")
        }
        var scanner = LogScanner(sealer: sealer, lastSequence: 0, lastCommit: 0)
        var log = try guarded("log") {
            try scanner.scan(bytes, from: LogFormat.headerByteCount, to: bytes.count, lenient: false)
        }
        let changeCount = log.changes.count
        let live = LogReplay.liveRecords(&log)
        return (live.records, live.nameHashes, log.transactions, changeCount)
    }

    /// The committed transactions in `[start, end)`; `start` is the end of a commit frame (or of
    /// the log header), whose sequence number continues the chain. `nil` if `start` is not the end
    /// of a commit frame.
    ///
    /// `trusted`: `start` is the store's own position, so damage found is the log's (fail and
    /// quarantine). Otherwise `start` came from a caller's cursor, which may point anywhere: a scan
    /// that fails returns `nil`, and the caller's full (guarded) load decides whether the log is
    /// really damaged, so a stray cursor can never get a healthy log quarantined.
    private func tail(
        _ handle: Log, from start: UInt64, to end: UInt64, trusted: Bool = false
    ) throws -> ScannedLog? {
        let headerEnd = UInt64(LogFormat.headerByteCount)
        guard start == headerEnd || start >= headerEnd + UInt64(LogFormat.commitFrameByteCount), start <= end else {
            return nil
        }
        let readStart = start == headerEnd ? start : start - UInt64(LogFormat.commitFrameByteCount)
        let bytes = try SystemCall.pread(handle.fd, count: Int(end - readStart), at: readStart, "reading the group log")
        guard bytes.count == Int(end - readStart) else {
            throw fail(TokenCacheError(.storeCorrupted, "the group's log is shorter than its committed length"), "log")
        }
        do {
            return try bytes.withUnsafeBytes { bytes in
                var scanner = LogScanner(sealer: sealer, lastSequence: 0, lastCommit: 0)
                if start != headerEnd {
                    guard let previous = LogFormat.sequenceOfCommitFrame(endingAt: LogFormat.commitFrameByteCount, in: bytes)
                    else {
                        return nil
                    }
                    scanner = LogScanner(sealer: sealer, lastSequence: previous, lastCommit: previous)
                }
                return try scanner.scan(
                    UnsafeRawBufferPointer(rebasing: bytes[Int(start - readStart)...]), base: start, lenient: false)
            }
        } catch let error as TokenCacheError where error.code == .storeCorrupted {
            if trusted { throw fail(error, "log") }
            return nil
        }
    }

    // MARK: Writing

    func transact(since cursor: StoreCursor, _ body: (StoreTransaction) throws -> [RecordChange]) throws -> StoreCursor {
        try checkHealthy()
        return try writer.withLock { writer in
            try lock.withLock(timeout: lockTimeout) {
                let (word, handle, scannedFrom, caughtUp) = try catchUp(&writer)
                let headerEnd = UInt64(LogFormat.headerByteCount)
                let committed = writer.position
                let epoch = UInt64(handle.epoch)
                let before = StoreCursor(generation: state.loadGeneration(), epoch: epoch, position: committed)
                let update: StoreUpdate
                if cursor.epoch == epoch, cursor.position == scannedFrom {
                    update = caughtUp.transactions.isEmpty ? .unchanged(before) : .changes(caughtUp.changes, before)
                } else if cursor.epoch == epoch, cursor.position >= headerEnd, cursor.position <= committed {
                    if cursor.position == committed {
                        update = .unchanged(before)
                    } else if let log = try tail(handle, from: cursor.position, to: committed) {
                        update = .changes(log.changes, before)
                    } else {
                        update = .reload(try loadAll(handle, length: committed).records, before)
                    }
                } else {
                    update = .reload(try loadAll(handle, length: committed).records, before)
                }
                let compacting = writer.wantsCompaction(minimumDead: compactionMinimumDead)
                let changes = try body(StoreTransaction(update: update, compacting: compacting))
                if changes.isEmpty, !compacting, committed == word.length { return before }
                if !changes.isEmpty { try append(changes, handle, &writer) }
                var compacted = false
                if compacting {
                    // The transaction is already durable in the old log; a failed compaction (disk
                    // full, say) only means the log stays longer for now.
                    compacted = (try? compact(&writer)) != nil
                }
                state.publish(CommitWord(epoch: writer.handle!.epoch, length: writer.position), durable: compacted)
                let generation = state.bumpGeneration()
                return StoreCursor(generation: generation, epoch: UInt64(writer.handle!.epoch), position: writer.position)
            }
        }
    }

    /// Brings the writer state up to the end of the log (lock holder only): replays the committed
    /// transactions it has not seen, then adopts complete ones past the published length and cuts
    /// the torn rest (``recoverTail(_:_:)``). Returns where the scan started and what it found.
    private func catchUp(
        _ writer: inout WriterState
    ) throws -> (word: CommitWord, handle: Log, scannedFrom: UInt64, caughtUp: ScannedLog) {
        let (word, handle) = try currentLog(holdingLock: true)
        if writer.handle?.epoch != handle.epoch || writer.position > word.length {
            writer = WriterState(handle: handle)
        }
        writer.handle = handle
        let scannedFrom = writer.position
        var caughtUp = ScannedLog.empty
        if writer.position < word.length {
            guard let log = try tail(handle, from: writer.position, to: word.length, trusted: true) else {
                throw fail(TokenCacheError(.storeCorrupted, "the group's log changed under a committed transaction"), "log")
            }
            caughtUp = log
            apply(caughtUp, to: &writer)
            writer.position = word.length
        }
        caughtUp.append(try recoverTail(handle, &writer))
        return (word, handle, scannedFrom, caughtUp)
    }

    /// At open: if the log runs past the published length, publishes the complete transactions
    /// there. After a power loss the state page may lag the synced log; without this, readers
    /// would see a shorter group until the next write. Waits for a live writer to finish first.
    private func publishUnpublishedTail() throws {
        try writer.withLock { writer in
            try lock.withLock(timeout: lockTimeout) {
                let (word, _, _, _) = try catchUp(&writer)
                guard writer.position != word.length else { return }
                state.publish(CommitWord(epoch: writer.handle!.epoch, length: writer.position), durable: false)
                _ = state.bumpGeneration()
            }
        }
    }

    /// Handles bytes past the published length: keeps complete, authenticated transactions (a
    /// writer that died between its `fsync` and publishing) and cuts off the torn rest.
    private func recoverTail(_ handle: Log, _ writer: inout WriterState) throws -> ScannedLog {
        let size = try handle.size("checking the group log")
        guard size > writer.position else { return .empty }
        let bytes = try SystemCall.pread(
            handle.fd, count: Int(size - writer.position), at: writer.position, "reading the group log")
        var scanner = LogScanner(sealer: sealer, lastSequence: writer.lastSequence, lastCommit: writer.lastCommit)
        let adopted = (try? bytes.withUnsafeBytes { try scanner.scan($0, base: writer.position, lenient: true) }) ?? .empty
        if let end = adopted.end {
            // Adopted transactions may never have reached the disk (their writer died inside
            // fsync): make them durable before anyone builds on them.
            try SystemCall.fsync(handle.fd, "syncing the group log")
            apply(adopted, to: &writer)
            writer.position = end
        }
        if size > writer.position {
            try SystemCall.ftruncate(handle.fd, writer.position, "cutting a torn append off the group log")
        }
        return adopted
    }

    private func apply(_ log: ScannedLog, to writer: inout WriterState) {
        for transaction in log.transactions {
            writer.note(
                log.changes[transaction.changes], hashes: log.nameHashes[transaction.changes], end: transaction.end,
                commitSequence: transaction.commitSequence)
        }
    }

    /// Appends one transaction and syncs it; on any failure cuts the file back so nothing of it
    /// survives.
    private func append(_ changes: [RecordChange], _ handle: Log, _ writer: inout WriterState) throws {
        var buffer: [UInt8] = []
        let sequence = try LogFormat.appendBatchFrames(
            changes, firstSequence: writer.lastSequence + 1, sealer: sealer, to: &buffer)
        try LogFormat.appendCommitFrame(
            sequence: sequence, count: changes.count, previousCommit: writer.lastCommit, recordsStart: 0, sealer: sealer,
            to: &buffer)
        guard writer.position + UInt64(buffer.count) <= CommitWord.maximumLength else {
            throw TokenCacheError(.diskFull, "the group's log would exceed 1 TiB")
        }
        do {
            try buffer.withUnsafeBytes { try SystemCall.pwrite(handle.fd, $0, at: writer.position, "appending to the group log") }
            try SystemCall.fsync(handle.fd, "syncing the group log", sync: .appendedLog)
        } catch {
            // The write's own error is the one to report. If the cut fails too, the bytes lie past
            // the published length, where the next writer cuts them (``recoverTail(_:_:)``).
            try? SystemCall.ftruncate(handle.fd, writer.position, "cutting a failed append off the group log")
            throw error
        }
        writer.note(
            changes, hashes: changes.lazy.map { RecordNameHash.hash($0.id) }, end: writer.position + UInt64(buffer.count),
            commitSequence: sequence)
    }

    /// Rewrites the log as its live records, sealed again as batch frames, and one commit frame,
    /// under a new epoch: new file (`O_EXCL`, `0600`) → `fsync` → `rename` → `fsync` of the
    /// directory. The records keep growing sequence numbers (they follow the old log's last).
    private func compact(_ writer: inout WriterState) throws {
        guard let old = writer.handle else { return }
        // Strict and guarded like a load: damage found here fails the group, as any reader would.
        let loaded = try loadAll(old, length: writer.position)
        let live = loaded.records.map(RecordChange.put)
        let epoch = old.epoch &+ 1
        var output = LogFormat.header(epoch: epoch, groupID: groupID)
        let sequence = try LogFormat.appendBatchFrames(live, firstSequence: writer.lastSequence + 1, sealer: sealer, to: &output)
        try LogFormat.appendCommitFrame(
            sequence: sequence, count: live.count, previousCommit: 0, recordsStart: LogFormat.headerByteCount, sealer: sealer,
            to: &output)
        let temporary = directory.file("log.compact")
        SystemCall.removeLeftover(temporary)  // of a compaction that crashed; we hold the lock
        do {
            try SystemCall.writeNewFile(temporary, output, "writing the compacted group log")
        } catch {
            SystemCall.removeLeftover(temporary)
            throw error
        }
        let fd = try directory.openFile("log.compact", O_RDWR, "opening the compacted group log")
        let handle = try Log(adopting: fd, header: epoch, "checking the compacted group log")
        do {
            try SystemCall.rename(temporary, directory.file("log"), "replacing the group log")
        } catch {
            SystemCall.removeLeftover(temporary)
            throw error
        }
        // The rename is visible from here on. Its epoch is published only once the rename is
        // durable: published first, a power cut could leave the old log under a state naming the
        // new one, a group that no longer opens. If the folder's sync fails, the state keeps the
        // old epoch, as if this writer had died here, and the next lock holder syncs the folder
        // before it adopts the new log (``adoptCompactedLog(_:)``).
        try SystemCall.fsyncDirectory(directory.path, sync: .compactionRename)
        logger.info(
            "compacted the log of group \(directory.name)",
            metadata: ["liveRecords": "\(live.count)", "deadRecords": "\(writer.deadCount)", "epoch": "\(epoch)"])
        writer = WriterState(handle: handle)
        writer.adoptLoad(
            [ScannedTransaction(changes: 0..<live.count, end: UInt64(output.count), commitSequence: sequence)],
            liveHashes: loaded.liveHashes, changeCount: live.count)
    }

    // MARK: Failure

    /// The damage an open (and a read-only check) can find in the log, besides what the scanner
    /// reports.
    static let damagedLogHeader = TokenCacheError(
        .storeCorrupted, "the group's log header is damaged or belongs to another group")
    static let epochMismatch = TokenCacheError(
        .storeCorrupted, "the group's log does not belong to its published state (epoch mismatch)")
    static let compactedWithoutTransaction = TokenCacheError(
        .storeCorrupted, "the group's log was replaced by one without a complete transaction")

    static func shorterLog(_ size: UInt64, _ word: CommitWord) -> TokenCacheError {
        TokenCacheError(.storeCorrupted, "the group's log is shorter (\(size) bytes) than its committed length (\(word.length))")
    }

    private func checkHealthy() throws {
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// Runs `body`; a `.storeCorrupted` error from it fails the group and quarantines `file`.
    private func guarded<T>(_ file: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as TokenCacheError where error.code == .storeCorrupted {
            throw fail(error, file)
        }
    }

    /// Fails the group with `error` (once: later calls rethrow the first failure) and copies the
    /// damaged `file` into `quarantine/`.
    private func fail(_ error: TokenCacheError, _ file: String) -> TokenCacheError {
        failure.withLock { failure in
            if let failure { return failure }
            let quarantined = Self.quarantined(error, file: file, in: directory, logger: logger)
            failure = quarantined
            return quarantined
        }
    }

    private static func quarantined(_ error: TokenCacheError, file: String, in directory: GroupDirectory, logger: Logger)
        -> TokenCacheError
    {
        var error = error
        let copy = directory.quarantine(file)
        logger.error(
            "the group \(directory.name) is damaged (its \(file) file) and cannot be used: \(error.code)",
            metadata: ["quarantine": .string(copy ?? "no copy could be made")])
        if let copy {
            error.message +=
                ". A copy of the damaged file was saved as \(copy); the group cannot be used until it is repaired or removed"
        } else {
            error.message += ". The damaged file could not be copied to quarantine; it was left in place"
        }
        return error
    }
}

extension LogHandle where Header == UInt16 {
    /// The epoch a file-store log's header names.
    fileprivate var epoch: UInt16 { header }
}
