import Logging
import Synchronization

/// A group's sealed records kept in the freedesktop Secret Service (the desktop keyring).
///
/// The group has two items in the default collection, both with only the schema, the group and a
/// role as attributes: its key (``KeyringKeyProvider``) and one "records" item holding a
/// ``KeyringSnapshot`` of every record, sealed under that key. The item is the group's only
/// source of truth. Its coordination folder (``GroupDirectory/keyring(root:name:)``, 0700) holds
/// the group lock, the shared generation (``SharedState``), and a sealed change journal
/// (``KeyringJournal``), all 0600.
///
/// - A write takes the group lock, brings the state it last saw up to date from the journal (or,
///   when the journal cannot tell, reads the item), applies the changes, appends them to the
///   journal, writes the item, commits them in the journal, and bumps the counter. So a write
///   from an up-to-date process does not read the item: one deleted or replaced behind the
///   library's back is written again whole from that state (reads of the item still report it).
/// - ``currentGeneration()`` is one atomic load. ``update(since:)`` returns `.unchanged` when the
///   counter has not moved; otherwise it reads the new transactions from the journal (no lock,
///   no D-Bus) and returns them as `.changes`. Only when the journal is missing, replaced,
///   damaged or does not reach the counter does it read the item and `.reload`.
/// - Damage in the journal is never an error and never a shortened group: it only means reading
///   the item.
///
/// A locked, missing or unreachable keyring is always a typed error, never an empty group.
final class KeyringStore: CacheStore {
    /// The group this store holds.
    let group: String
    /// What the store is, with a warning when the group's writers do not all share this
    /// process's coordination folder.
    var storeDescription: StoreDescription {
        var description = baseDescription
        if let split = splitNotice.withLock({ $0 }) { description.warnings.append(split) }
        return description
    }
    private let baseDescription: StoreDescription
    /// The id of this process's coordination folder, recorded in every snapshot it writes.
    private let folderID: [UInt8]
    /// Set when an item was found written by a process that used another coordination folder.
    private let splitNotice = Mutex<String?>(nil)
    private let logger: Logger

    private let client: KeyringClient
    private let sealer: RecordSealer
    let groupDirectory: GroupDirectory?
    private let lock: FileLock
    private let lockTimeout: Duration
    /// The group's shared generation (the page in its coordination folder).
    private let shared: SharedState
    private let journal: KeyringJournal
    /// The newest whole state of the group this store has seen, and where its generation ends in
    /// the journal: a writer brings it up to date from the journal instead of reading the item.
    private let known = Mutex<Known?>(nil)
    /// The item as opening the store read it, for the first ``load()`` (taken by it).
    private let opened = Mutex<KeyringSnapshot?>(nil)
    /// How many times the records item was read (see ``itemReads``).
    private let itemReadCount = Atomic(0)

    /// What the lock holder starts a transaction from.
    private struct WriterState {
        /// The group's current state.
        var snapshot: KeyringSnapshot
        /// Where the journal ends with the state's generation; `nil`: start a new journal.
        var appendAt: UInt64?
        /// What the caller must apply to reach the state.
        var update: StoreUpdate
    }

    /// A whole state of the group and the journal position of its generation (0: unknown).
    private struct Known: Sendable {
        var snapshot: KeyringSnapshot
        var position: UInt64
    }

    /// Opens `group` in the Secret Service, creating its key on first use.
    ///
    /// - Parameters:
    ///   - options: time limits and whether an unlock prompt may be shown.
    ///   - root: the file-store root under which the group's coordination folder is (see
    ///     ``GroupDirectory/keyring(root:name:)``); `nil` means ``GroupDirectory/defaultRoot()``.
    ///   - lockTimeout: how long a write waits for another process's write.
    ///   - journalSizeLimit: the journal size past which the next write starts a new journal.
    /// - Throws: ``TokenCacheError`` — ``TokenCacheError/Code/noSessionBus``,
    ///   ``TokenCacheError/Code/secretServiceUnavailable``, ``TokenCacheError/Code/collectionLocked``,
    ///   ``TokenCacheError/Code/keyringTimeout`` and the other codes of the parts.
    init(
        group: String,
        options: KeyringOptions = KeyringOptions(),
        root: String? = nil,
        lockTimeout: Duration = .seconds(10),
        journalSizeLimit: Int = KeyringJournal.defaultSizeLimit,
        logger: Logger = .discarding
    ) throws {
        self.logger = logger
        try GroupName.validate(group)
        self.group = group
        client = KeyringClient(schema: .group, options: options)
        // Availability first: "no bus", "no service" and "locked" are the answers a caller acts on.
        try client.requireUnlocked()
        let directory = try GroupDirectory.keyring(root: root ?? GroupDirectory.defaultRoot(), name: group)
        try directory.createIfNeeded()
        groupDirectory = directory
        folderID = try directory.identity()
        lock = FileLock(path: directory.file("lock"), purpose: "the group \(group)", logger: logger)
        self.lockTimeout = lockTimeout
        shared = try SharedState(directory: directory, creating: true)
        let keys = KeyringKeyProvider(group: group, client: client, lock: lock, lockTimeout: lockTimeout)
        sealer = try RecordSealer(groupKey: keys.groupKey(), groupName: group)
        journal = KeyringJournal(directory: directory, sealer: sealer, sizeLimit: journalSizeLimit)
        baseDescription = StoreDescription(
            kind: .keyring,
            location: "Secret Service default collection, schema \(KeyringSchema.group.name), group \(group)",
            protection: keys.protectionLevel,
            reason: "a keyring store was requested",
            coordinationDirectory: directory.path
        )
        // A fresh counter file (its folder was removed) starts at 0 while the keyring keeps its
        // sequence: catch the counter up once, so readers do not re-read.
        try lock.withLock(timeout: lockTimeout) {
            let snapshot = try readSnapshot()
            if shared.loadGeneration() < snapshot.sequence { shared.storeGeneration(snapshot.sequence) }
            remember(snapshot, position: journal.position(of: snapshot.sequence))
            opened.withLock { $0 = snapshot }
        }
    }

    /// The attributes of the group's records item.
    private var recordsAttributes: [String: String] { ["group": group, "role": "records"] }

    private func cursor(_ sequence: UInt64, position: UInt64) -> StoreCursor {
        StoreCursor(generation: sequence, epoch: 0, position: position)
    }

    /// Keeps `snapshot` as the newest state seen, unless a newer one is kept already.
    private func remember(_ snapshot: KeyringSnapshot, position: UInt64) {
        known.withLock { known in
            if let kept = known, kept.snapshot.sequence > snapshot.sequence { return }
            known = Known(snapshot: snapshot, position: position)
        }
    }

    /// How many times this store has read the records item over D-Bus (for tests and
    /// diagnostics: catching up from the journal reads none).
    var itemReads: Int { itemReadCount.load(ordering: .relaxed) }

    /// Reads and opens the records item (one D-Bus lookup).
    private func readSnapshot() throws -> KeyringSnapshot {
        itemReadCount.add(1, ordering: .relaxed)
        let published = shared.loadGeneration()
        let snapshot = try client.withSecret(attributes: recordsAttributes) { bytes in
            try KeyringSnapshot.open(bytes, with: sealer)
        }
        if let snapshot { noticeSplit(snapshot) }
        guard let snapshot else {
            guard published == 0 else {
                throw TokenCacheError(
                    .storeCorrupted,
                    "the keyring records item of group \(group) is missing although generation \(published) was committed; nothing was overwritten"
                )
            }
            return .empty
        }
        guard snapshot.sequence >= published else {
            throw TokenCacheError(
                .storeCorrupted,
                "the keyring records item of group \(group) is older (\(snapshot.sequence)) than the committed generation (\(published)): it was rolled back"
            )
        }
        return snapshot
    }

    /// Reports (once) an item written by a process whose coordination folder is not this one's:
    /// such writers take another lock and bump another counter, so neither side sees the other's
    /// commits at once and their refreshes are not single-flight.
    private func noticeSplit(_ snapshot: KeyringSnapshot) {
        guard snapshot.sequence > 0, snapshot.writer != folderID,
            snapshot.writer != KeyringSnapshot.noWriter
        else { return }
        let message =
            "the keyring group \(group) was last written by a process that coordinates in another folder than this process's (another HOME, XDG_DATA_HOME or --directory, or this folder was recreated since): open the group with the same data folder in every process"
        let first = splitNotice.withLock { notice in
            defer { notice = message }
            return notice == nil
        }
        if first { logger.warning("\(message)") }
    }

    func currentGeneration() -> UInt64 { shared.loadGeneration() }

    func load() throws -> ([Record], StoreCursor) {
        // The engine loads right after opening: the item read then (under the lock) is still the
        // group's state if no commit came since, and a second D-Bus read would only repeat it.
        let snapshot: KeyringSnapshot
        if let fresh = opened.withLock({ $0.take() }), fresh.sequence == shared.loadGeneration() {
            snapshot = fresh
        } else {
            snapshot = try readSnapshot()
        }
        let position = journal.position(of: snapshot.sequence)
        remember(snapshot, position: position)
        return (Array(snapshot.records.values), cursor(snapshot.sequence, position: position))
    }

    func update(since cursor: StoreCursor) throws -> StoreUpdate {
        let published = shared.loadGeneration()
        guard cursor.generation != published else { return .unchanged(cursor) }
        if cursor.epoch == 0, cursor.generation < published,
            let (changes, position) = journal.changes(after: cursor.generation, hint: cursor.position, through: published)
        {
            return .changes(changes, self.cursor(published, position: position))
        }
        let snapshot = try readSnapshot()
        let position = journal.position(of: snapshot.sequence)
        remember(snapshot, position: position)
        return Self.update(from: snapshot, position: position, since: cursor)
    }

    private static func update(from snapshot: KeyringSnapshot, position: UInt64, since cursor: StoreCursor) -> StoreUpdate {
        let current = StoreCursor(generation: snapshot.sequence, epoch: 0, position: position)
        guard snapshot.sequence != cursor.generation || cursor.epoch != 0 else { return .unchanged(current) }
        // The item holds a snapshot, not a history: a reader the journal cannot catch up reloads.
        return .reload(Array(snapshot.records.values), current)
    }

    func transact(since cursor: StoreCursor, _ body: (StoreTransaction) throws -> [RecordChange]) throws -> StoreCursor {
        try lock.withLock(timeout: lockTimeout) {
            let file = journal.openForWriting()
            var state = try writerState(file, since: cursor)
            let before = self.cursor(state.snapshot.sequence, position: state.appendAt ?? 0)
            let changes: [RecordChange]
            do {
                changes = try body(StoreTransaction(update: state.update, compacting: false))
            } catch {
                remember(state.snapshot, position: before.position)
                throw error
            }
            guard !changes.isEmpty else {
                remember(state.snapshot, position: before.position)
                return before
            }
            state.snapshot.apply(changes)
            state.snapshot.sequence += 1
            state.snapshot.writer = folderID
            let generation = state.snapshot.sequence
            let sealed = try state.snapshot.sealed(with: sealer)
            // Batch frames before the item, commit frame after: a journal ending with a commit
            // frame then always says what the item holds, even if this process dies in between.
            let pending = try journal.begin(changes, generation: generation, appendingTo: file, at: state.appendAt)
            do {
                try sealed.withUnsafeBytes { bytes in
                    try client.store(bytes, label: "SecureTokenCache sealed records (\(group))", attributes: recordsAttributes)
                }
            } catch {
                if let pending { journal.abandon(pending) }
                throw error
            }
            let position = pending.flatMap { journal.commit($0) }?.end ?? 0
            // Published only after the Secret Service accepted the item (and the journal holds the
            // commit): readers never see a generation whose data is not there.
            shared.storeGeneration(generation)
            remember(state.snapshot, position: position)
            return self.cursor(generation, position: position)
        }
    }

    /// The group's state for the lock holder, where the journal `file` ends with its generation
    /// (`nil`: a new journal must be started), and what a caller at `cursor` must apply to catch
    /// up. From the newest state seen plus the journal when the journal reaches the counter and
    /// ends cleanly (no writer stopped half-way); else from the records item.
    private func writerState(_ file: KeyringJournal.File?, since cursor: StoreCursor) throws -> WriterState {
        let published = shared.loadGeneration()
        // Taken out, so applying the journal changes it in place instead of copying it; the
        // caller remembers the state it ends with.
        var kept = known.withLock { $0.take() }
        if var state = kept.take(), let file,
            let tail = journal.tail(of: file, after: state.snapshot.sequence, hint: state.position),
            tail.reachesEnd, state.snapshot.sequence + UInt64(tail.transactionCount) >= published
        {
            let keptCursor = self.cursor(state.snapshot.sequence, position: tail.start)
            state.snapshot.apply(tail.log.changes)
            state.snapshot.sequence += UInt64(tail.transactionCount)
            let now = self.cursor(state.snapshot.sequence, position: tail.end)
            let update: StoreUpdate
            if cursor.generation == now.generation, cursor.epoch == 0 {
                update = .unchanged(now)
            } else if cursor == keptCursor {
                update = .changes(tail.log.changes, now)
            } else {
                update = catchUp(cursor, in: file, to: state.snapshot, at: tail.end)
            }
            return WriterState(snapshot: state.snapshot, appendAt: tail.end, update: update)
        }
        let snapshot = try readSnapshot()
        let appendAt = file.flatMap { journal.appendPosition(in: $0, after: snapshot.sequence) }
        let update = file.map { catchUp(cursor, in: $0, to: snapshot, at: appendAt ?? 0) }
        return WriterState(
            snapshot: snapshot, appendAt: appendAt,
            update: update ?? Self.update(from: snapshot, position: appendAt ?? 0, since: cursor))
    }

    /// What a caller at `cursor` must apply to reach `snapshot`: the journal's transactions if
    /// `file` has them all, else the whole snapshot.
    private func catchUp(_ cursor: StoreCursor, in file: KeyringJournal.File, to snapshot: KeyringSnapshot, at position: UInt64)
        -> StoreUpdate
    {
        if cursor.epoch == 0, cursor.generation < snapshot.sequence,
            let (changes, _) = journal.changes(
                in: file, after: cursor.generation, hint: cursor.position, through: snapshot.sequence)
        {
            return .changes(changes, self.cursor(snapshot.sequence, position: position))
        }
        return Self.update(from: snapshot, position: position, since: cursor)
    }
}
