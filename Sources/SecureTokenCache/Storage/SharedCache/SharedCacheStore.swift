import Glibc
import Logging
import Synchronization

/// A group kept in a cache the MSAL SDKs' extensions share (``MSALSharedCache``): one MSAL JSON
/// document in a file or a keyring item, which Azure CLI, azure-identity and the .NET tools read
/// and write as well.
///
/// How it keeps the seam's promises (``CacheStore``) with writers that know nothing of it:
/// - **Generation**: an in-process counter, bumped by this store's commits and by an inotify
///   watcher on the document (or the signal file), which every tool writes or touches after a
///   write. A lookup loads the counter; only after an event does a reader look at the file's
///   version (inode, size, times, as a whole) and re-read the document when it moved.
/// - **Transactions**: under the tools' lock file (``SharedCacheLock``), the document is read
///   again, the transaction merged onto it, and the whole document written back (``MSALDocument``
///   writes exactly what msal-python would), so every tool's entries, and the sections and fields
///   this library does not know, survive. A document that cannot be parsed under the lock is
///   never written over.
/// - **Crash mid-commit**: the medium replaces the document whole; the lock file of a writer
///   that died is taken over.
/// - **What it does not promise**: sealing. The document is the other tools' format.
///
/// Per-client sign-in state and tenant aliases, which MSAL documents have no place for, are kept
/// in one extra top-level section, ``extrasSection``, which the MSAL SDKs keep as they found it.
final class SharedCacheStore: CacheStore {
    /// The top-level section that holds what only this library reads.
    static let extrasSection = "SecureTokenCache"

    /// How a reader waits out a tool that rewrites the document in place (truncate, then write)
    /// while holding its lock.
    static let partialReadBackoff = FileLock.Backoff(first: .milliseconds(1), longest: .milliseconds(20))
    /// How long a reader waits for a document that does not parse to become whole.
    static let partialReadDeadline = Duration.seconds(2)
    /// How long a document that is empty or does not parse must stay as it is, with no lock file
    /// there, before a reader outside the lock believes it: longer than a tool takes between
    /// truncating the file and writing it.
    static let partialReadSettle = Duration.milliseconds(100)

    private struct State {
        /// The version of the document `document` was read from (`nil`: no document).
        var version: DocumentVersion?
        var document = SharedDocumentRecords()
        /// Bumped each time the records change; a cursor's position.
        var sequence: UInt64 = 1
        /// The changes from `sequence - 1` to `sequence`, when known.
        var lastChanges: [RecordChange]?
        /// The document's index, made when a write needs it, as of the last write or build.
        var index: Index?
        /// What each read since then changed, in order: the next write files it into ``index``,
        /// so that a process that mostly reads never pays for the index only its writes use.
        var unfiled: [[RecordChange]] = []
    }

    /// How many reads may leave their changes unfiled before ``State/index`` is dropped instead
    /// (and built again by the next write): a process that only reads keeps no growing list.
    static let unfiledReadLimit = 64

    /// The generation and the ``changes()`` streams, shared with the watcher's thread and with
    /// the other stores of this process on the same document (``neighbours``).
    private final class Announcer: Sendable {
        let generation = Atomic<UInt64>(0)
        let listeners = ChangeListeners()

        /// Bumps the generation, then wakes every stream, so a woken reader sees the new one.
        func announce() {
            generation.wrappingAdd(1, ordering: .releasing)
            listeners.yieldToAll()
        }
    }

    let storeDescription: StoreDescription
    let groupDirectory: GroupDirectory?
    private let medium: any SharedDocumentMedium
    private let lock: SharedCacheLock
    /// Where this library's writers of the group wait their turn before they look for the tools'
    /// lock file: one process of ours at a time competes for it, so the tools, which look for a
    /// free moment only every quarter of a second and give up after a few seconds, are not
    /// outnumbered by every process of ours that has a write to make.
    private let queue: FileLock
    private let lockTimeout: Duration
    private let logger: Logger
    private let announcer = Announcer()
    /// The announcers of this process's stores, by watched file: a commit announces itself to
    /// every store of the process on the same document at once, so that a group of this process
    /// never answers from before a commit of another; other processes learn of it from their
    /// watchers.
    private static let neighbours = Mutex<[String: [Weak]]>([:])

    private struct Weak: @unchecked Sendable {
        weak var announcer: Announcer?
    }
    private let state = Mutex(State())
    /// Kept for its thread, which bumps the generation after every event on the watched file;
    /// `nil` for a group opened only to be read whose document's folder does not exist (a read
    /// creates nothing).
    private let watcher: GroupChangeWatcher?

    /// Opens the shared cache in `medium`, locked with `lockFile`, as the group `name`;
    /// `coordination` is where this library's processes keep the group's refresh locks.
    ///
    /// - Throws: ``TokenCacheError/Code/malformedCache`` when the document is not an MSAL cache,
    ///   and the medium's errors.
    init(
        name: String, kind: StoreKind, medium: any SharedDocumentMedium, lockFile: String, coordination: GroupDirectory,
        protection: ProtectionLevel, lockTimeout: Duration, logger: Logger, creatingFolder: Bool = true
    ) throws {
        self.medium = medium
        self.lock = SharedCacheLock(path: lockFile, logger: logger)
        queue = FileLock(path: coordination.file("writers.lock"), purpose: "the writers' queue of \(name)", logger: logger)
        self.lockTimeout = lockTimeout
        self.logger = logger
        groupDirectory = coordination
        var description = StoreDescription(
            kind: kind, location: medium.location, protection: protection,
            reason: "the \(kind) store was requested", coordinationDirectory: coordination.path)
        description.warnings = [medium.exposure] + (medium.accessWarning().map { [$0] } ?? [])
        storeDescription = description
        let folder = SystemCall.parentDirectory(of: medium.watchedFile)
        var watchable = try SystemCall.lstat(folder, "opening the shared cache") != nil
        if !watchable && creatingFolder {
            // A tool signing in later creates the document there: watch for it from now on.
            try GroupDirectory.createFolders(folder)
            watchable = true
        }
        let file = SystemCall.fileName(of: medium.watchedFile)
        let events = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MODIFY
        let announcer = announcer
        Self.neighbours.withLock { all in
            all[medium.watchedFile, default: []].removeAll { $0.announcer == nil }
            all[medium.watchedFile, default: []].append(Weak(announcer: announcer))
        }
        watcher =
            watchable
            ? try GroupChangeWatcher(directory: folder, files: [file], events: UInt32(events)) { announcer.announce() } : nil
        try refresh(force: true)
    }

    func currentGeneration() -> UInt64 { announcer.generation.load(ordering: .acquiring) }

    /// Compares the watched file's version now with the one the document was last read at, and
    /// moves the generation when they differ: another tool's write the watcher's thread has not
    /// announced yet, or one it cannot see (its folder was removed and made again).
    func checkForChanges() -> Bool {
        let now: DocumentVersion?
        do {
            now = try medium.version()
        } catch {
            // The next read that has a reason to look reports what is wrong with the file.
            return false
        }
        guard now != state.withLock({ $0.version }) else { return false }
        announcer.announce()
        return true
    }

    func changes() throws -> AsyncStream<Void> { announcer.listeners.stream() }

    func load() throws -> ([Record], StoreCursor) {
        let generation = currentGeneration()
        try refresh(force: false)
        return state.withLock {
            (.init($0.document.records), StoreCursor(generation: generation, epoch: 0, position: $0.sequence))
        }
    }

    func update(since cursor: StoreCursor) throws -> StoreUpdate {
        // The generation first: a change after this load moves it again, so it is never missed.
        let generation = currentGeneration()
        try refresh(force: false)
        return state.withLock { Self.update(of: $0, since: cursor, generation: generation) }
    }

    private static func update(of state: State, since cursor: StoreCursor, generation: UInt64) -> StoreUpdate {
        let now = StoreCursor(generation: generation, epoch: 0, position: state.sequence)
        if cursor.position == state.sequence { return .unchanged(now) }
        if cursor.position + 1 == state.sequence, let changes = state.lastChanges { return .changes(changes, now) }
        return .reload(state.document.records, now)
    }

    func transact(since cursor: StoreCursor, _ body: (StoreTransaction) throws -> [RecordChange]) throws -> StoreCursor {
        try groupDirectory?.createIfNeeded()
        return try queue.withLock(timeout: lockTimeout) {
            // The document as it is now, read before the tools' lock is taken: under it, it is
            // read again only if a tool wrote meanwhile, so the lock is held for the merge and the
            // write alone as often as possible, and the tools waiting for it are not starved. A
            // failure here is left to the read under the lock, which decides.
            try? refresh(force: false)
            return try lock.withLock(timeout: lockTimeout) { try commit(since: cursor, body) }
        }
    }

    /// One transaction, holding the tools' lock file.
    private func commit(since cursor: StoreCursor, _ body: (StoreTransaction) throws -> [RecordChange]) throws -> StoreCursor {
        medium.removeLeftovers()
        let generation = currentGeneration()
        // Under the lock the document is whole: one that does not parse is damaged, and is
        // reported rather than written over.
        try refresh(force: false, locked: true)
        let (update, base, unfiled) = state.withLock { state in
            (Self.update(of: state, since: cursor, generation: generation), state.index, state.unfiled)
        }
        let changes = try body(StoreTransaction(update: update, compacting: false))
        guard !changes.isEmpty else { return update.cursor }
        var index = try Self.index(base, filing: unfiled) ?? RecordCodec.build(state.withLock { $0.document.records })
        try RecordCodec.apply(.changes(changes, update.cursor), to: &index)
        let bytes = Self.document(index)
        let version = try medium.write(bytes)
        let next = try state.withLock { state -> StoreCursor in
            try state.document.adopt(bytes, index: index, changes: changes)
            state.version = version
            state.sequence += 1
            state.lastChanges = changes
            state.index = index
            state.unfiled = []
            return StoreCursor(generation: generation &+ 1, epoch: 0, position: state.sequence)
        }
        let neighbours = Self.neighbours.withLock { $0[medium.watchedFile, default: []].compactMap(\.announcer) }
        for neighbour in neighbours { neighbour.announce() }
        return next
    }

    // MARK: - Reading the document

    /// Reads the document again if its version moved since the last read, and always under the
    /// lock or with `force`; records what changed.
    ///
    /// A version (inode, size, times) can stay the same across two writes: a file system whose
    /// times are coarse, a rewrite of the same size within one tick (a refresh token rotated for
    /// one of the same length). A write that took the document as it last read it would write it
    /// back over the other tool's, so under the lock it is read every time (the same bytes are
    /// compared, not parsed). A lookup that serves the document a moment old serves tokens that
    /// are still valid, and the refresh they would need reads it under the lock.
    private func refresh(force: Bool, locked: Bool = false) throws {
        let known = state.withLock { $0.version }
        let now = try medium.version()
        if !force, !locked, now == known { return }
        try readDocument(locked: locked, versionUnchanged: now == known)
    }

    /// Reads the document into ``State/document``. Outside the lock, a document that is empty or
    /// does not parse may be a tool's in-place write in progress (truncate, then write): it is
    /// read again until it parses, and believed (an empty one) or reported (one that does not
    /// parse) only once it stayed as it was for ``partialReadSettle`` with no lock file there, or
    /// when ``partialReadDeadline`` passes. The lock file alone cannot say that nobody writes:
    /// msal-extensions with portalocker removes it on release while the next writer, which
    /// opened it before, takes the lock on the removed file and writes. Under the lock, an empty
    /// document is waited for the same way, a damaged one reported at once.
    ///
    /// `versionUnchanged`: the version is the one last read; the same bytes are then compared,
    /// not parsed again.
    private func readDocument(locked: Bool, versionUnchanged: Bool = false) throws {
        let clock = ContinuousClock()
        let deadline = clock.now + Self.partialReadDeadline
        var pause = Self.partialReadBackoff.first
        // The version an empty or unparsable document was first seen with, and when.
        var unsettled: (version: DocumentVersion?, since: ContinuousClock.Instant)?
        let lockFile = lock.path
        // Whether the document read at `version` may still be a write in progress. Under the lock
        // one that does not parse is damaged, but an empty one may still be a tool's write that
        // took the lock on a removed file (above): believed at once, it would remove every
        // entry, and the write that follows would leave only this one's. It is believed once it
        // stayed empty for ``partialReadSettle`` (the lock file is this process's own).
        func mayBeWritten(_ version: DocumentVersion?, empty: Bool) throws -> Bool {
            guard !locked || empty, version != nil, clock.now < deadline else { return false }
            guard let first = unsettled, first.version == version else {
                unsettled = (version, clock.now)
                return true
            }
            if clock.now - first.since < Self.partialReadSettle { return true }
            return try !locked && SystemCall.lstat(lockFile, "looking at the shared cache's lock file") != nil
        }
        func wait() {
            SystemCall.sleep(for: pause)
            pause = min(pause * 2, Self.partialReadBackoff.longest)
        }
        while true {
            let (bytes, version) = try medium.read()
            if versionUnchanged, state.withLock({ $0.document.holds(bytes) && $0.version == version }) { return }
            if bytes.isEmpty, try mayBeWritten(version, empty: true) {
                wait()
                continue
            }
            do {
                try state.withLock { state in
                    // A document that does not parse changes nothing (read changes the document
                    // only once all of it parsed).
                    let changes = try state.document.read(bytes, location: medium.location)
                    state.version = version
                    guard !changes.isEmpty else { return }
                    state.sequence += 1
                    state.lastChanges = changes
                    // The next write starts from the index of this document: the changes are
                    // what another tool's write changed, a few entries, not the whole cache.
                    if state.index != nil {
                        if state.unfiled.count < Self.unfiledReadLimit {
                            state.unfiled.append(changes)
                        } else {
                            state.index = nil
                            state.unfiled = []
                        }
                    }
                }
                return
            } catch let error as TokenCacheError where error.code == .malformedCache {
                guard try mayBeWritten(version, empty: false) else { throw error }
                wait()
            }
        }
    }

    /// `base` with the changes of `unfiled` filed into it in order, or `nil` when there is no
    /// base or a change does not file (the caller builds the index from the records then).
    private static func index(_ base: Index?, filing unfiled: [[RecordChange]]) -> Index? {
        guard var index = base else { return nil }
        do {
            for changes in unfiled { try RecordCodec.apply(.changes(changes, .start), to: &index) }
        } catch {
            return nil
        }
        return index
    }

    /// The document for `index`: what msal-python writes for its entries, with
    /// ``extrasSection`` last when there is anything to keep there.
    static func document(_ index: Index) -> [UInt8] {
        var document = index
        var states = JSONObject()
        for (client, state) in document.clientStates.sorted(by: { $0.key < $1.key }) {
            states.appendUnchecked(key: client, value: state.json)
        }
        var aliases = JSONObject()
        for (name, tenant) in document.tenantAliases.sorted(by: { $0.key < $1.key }) {
            aliases.appendUnchecked(key: name, value: .string(tenant))
        }
        if states.count > 0 || aliases.count > 0 {
            var extras = JSONObject()
            if states.count > 0 { extras.appendUnchecked(key: "ClientState", value: .object(states)) }
            if aliases.count > 0 { extras.appendUnchecked(key: "TenantAlias", value: .object(aliases)) }
            document.setUnknownSection(extrasSection, .object(extras))
            if !document.sections.contains(extrasSection) { document.setSections(document.sections + [extrasSection]) }
        }
        return MSALDocument.export(document, includeSecrets: true)
    }
}
