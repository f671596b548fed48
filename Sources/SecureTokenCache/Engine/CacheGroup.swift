import CoreMetrics
import Dispatch
import Glibc
import HashTreeCollections
import Logging
import Synchronization

/// A named cache shared by every app that opens it: the Linux analogue of a keychain access
/// group. Open one per process and group; hand it to a ``TokenCache`` per client id.
///
/// Reads never touch the disk or D-Bus: the group holds an immutable index snapshot and, before
/// each lookup, compares the store's shared generation counter with the snapshot's (one atomic
/// load). Only when another process committed does it replay what it has not seen. In another
/// tool's shared cache (``MSALSharedCache``), a lookup that finds nothing first looks at the
/// document's version (one `stat`), so that it never misses a write the tool has just finished.
/// Writes are transactions under the group's cross-process lock.
///
/// ```swift
/// let group = try CacheGroup.open("com.contoso.apps")
/// let mail = try TokenCache(clientId: "11111111-aaaa-4bbb-8ccc-000000000001", group: group)
/// ```
///
/// See <doc:SharingSignInAcrossApps> for what the apps of a group share.
public final class CacheGroup: Sendable {
    /// The default group name, the macOS keychain access group of the Microsoft SDKs.
    public static let defaultName = "com.microsoft.identity.universalstorage"

    /// An index snapshot and the store position it reflects. A class, so taking a snapshot is
    /// one retain.
    ///
    /// Immutable to everyone but ``CacheGroup/catchUp()``, which updates the installed snapshot
    /// in place only while holding `current`'s lock and only when that lock holds the sole
    /// reference: then no reader can see the change happen, and the index's tries are updated
    /// in place instead of being path-copied and the old paths freed.
    final class Snapshot: @unchecked Sendable {
        // Never mutated while another reference exists (see above), so the dynamic exclusivity
        // check on every read would only cost time.
        @exclusivity(unchecked) private(set) var index: Index
        @exclusivity(unchecked) private(set) var cursor: StoreCursor

        init(index: Index, cursor: StoreCursor) {
            self.index = index
            self.cursor = cursor
        }

        /// Whether ``CacheGroup`` may update the installed snapshot in place. Not in a
        /// ThreadSanitizer build (`STC_THREAD_SANITIZER`): what orders a reader's last read
        /// before the update is the reader's release of its reference, in the Swift runtime's
        /// reference counting, which is not instrumented. ThreadSanitizer sees no order there and
        /// reports a race that is not one, so that build always builds the next snapshot aside,
        /// as every build does while a reader holds the installed one.
        #if STC_THREAD_SANITIZER
            static let updatesInPlace = false
        #else
            static let updatesInPlace = true
        #endif

        /// Applies a decoded update in place; see the type's rule for when that is allowed.
        fileprivate func advance(_ update: RecordCodec.DecodedUpdate, to cursor: StoreCursor) {
            RecordCodec.file(update, into: &index)
            self.cursor = cursor
        }
    }

    /// The group's name.
    public let name: String
    let store: any CacheStore
    /// The clock a test gave; `nil`: the system's (``clock()``).
    private let injectedClock: (@Sendable () -> Int64)?
    /// Where the group and its caches say what an operator needs to know (never a token, a
    /// secret or a user name).
    let logger: Logger
    /// The group's size limit (``CacheConfiguration/memoryLimit``); `nil` for an unbounded group.
    let bound: CacheBound?
    /// What the group counts for dashboards.
    let metrics: CacheMetrics
    /// The store, when it keeps in memory only the partitions lookups ask for (``PartialStore``);
    /// then ``bound`` is the limit of what it keeps, reached by dropping partitions from memory,
    /// never by deleting them.
    let partial: (any PartialStore)?
    /// How many times the group changed what it holds without its generation moving: partitions
    /// dropped from memory, and writes kept in memory while the database did not answer. A
    /// cache's remembered answers (``TokenCache/Answers``) hold only while neither moves, so that
    /// they keep nothing in memory that the group dropped, and answer nothing a write kept in
    /// memory removed or replaced.
    let localChanges = Atomic<UInt64>(0)
    /// What the group does while its database does not answer (only a database store says so).
    let outagePolicy: CacheConfiguration.DatabaseOutagePolicy
    /// Writes made while the database did not answer, to commit when it answers again
    /// (``CacheConfiguration/DatabaseOutagePolicy/keepInMemory``).
    private let pending = Mutex(PendingWrites())
    /// Why the store was chosen, when the opener knows better than the store.
    private let reason: String?
    private let current: Mutex<Snapshot>
    /// What an open that only inspects the group read and has not filed into an index yet (see
    /// `init`'s `filesOnFirstUse`): filed by the first read or write, counted where it is by
    /// ``statistics()``. `nil` once filed, and for every other open.
    private let unfiled: Mutex<Unfiled?>
    /// Serialises catching up, so concurrent readers replay another process's write once; holds
    /// the decoder catch-ups share, so that the account, cloud and scopes a write names again
    /// (a refresh names the same user every time) are parsed once, not once per catch-up.
    private let catchUpLock = Mutex(EntryDecoder())
    /// Serialises this process's writers (the store's lock serialises processes).
    private let writerLock = Mutex(())

    /// Opens a group held in this process's memory only: a server's cache, tests, short-lived
    /// tools.
    ///
    /// - Parameters:
    ///   - name: the group's name, for metrics and messages.
    ///   - memoryLimit: the most bytes its entries may take (see
    ///     ``CacheConfiguration/memoryLimit``); `nil` for no limit.
    public convenience init(inMemory name: String = CacheGroup.defaultName, memoryLimit: Int? = nil) {
        // A fresh memory store cannot fail to load.
        try! self.init(name: name, store: MemoryStore(name: name), memoryLimit: memoryLimit)
    }

    /// Opens the group `store` holds.
    ///
    /// With `filesOnFirstUse` (an open for a command that may only inspect the group), the
    /// records are read and authenticated now, and filed into an index by the first read or
    /// write: ``statistics()`` counts them without an index, which in a large group is most of
    /// an open's cost. A group with a memory limit, over a store that keeps part of it, or that
    /// serves through a database outage always files at once.
    init(
        name: String, store: any CacheStore, clock: (@Sendable () -> Int64)? = nil,
        reason: String? = nil, logger: Logger = .discarding, memoryLimit: Int? = nil,
        whenDatabaseUnavailable: CacheConfiguration.DatabaseOutagePolicy = .fail, filesOnFirstUse: Bool = false
    ) throws {
        self.name = name
        outagePolicy = whenDatabaseUnavailable
        self.logger = logger
        metrics = CacheMetrics(group: name)
        self.store = store
        let partial = (store as? any PartialStore).flatMap { $0.keepsPart ? $0 : nil }
        self.partial = partial
        bound = memoryLimit.map { CacheBound(limit: $0, keepsPart: partial != nil) }
        injectedClock = clock
        self.reason = reason
        let (records, cursor) = try store.load()
        if filesOnFirstUse, partial == nil, bound == nil, whenDatabaseUnavailable == .fail {
            unfiled = Mutex(Unfiled(records: records, cursor: cursor))
            // No store reaches this cursor, so the first read catches up, which files the records.
            current = Mutex(Snapshot(index: Index(), cursor: .unfiled))
            return
        }
        unfiled = Mutex(nil)
        current = Mutex(Snapshot(index: try RecordCodec.build(records), cursor: cursor))
        // A large open decrypts and decodes every record into buffers it then frees.
        HeapTrim.after(handling: records.reduce(0) { $0 + $1.payload.count })
        if partial != nil { current.withLock { bound?.account($0.index) } }
    }

    /// A store's records as an open read them, and where the store was then.
    private struct Unfiled: Sendable {
        let records: [Record]
        let cursor: StoreCursor
    }

    /// Files what the open read, if nothing has yet: before anything reads or writes `current`
    /// (an open that files on first use installs an empty index at ``StoreCursor/unfiled``).
    /// Concurrent callers wait for the one filing; a damaged record throws here, every time.
    private func fileUnfiled() throws {
        try unfiled.withLock { unfiled in
            guard let read = unfiled else { return }
            let index = try RecordCodec.build(read.records)
            current.withLock { $0 = Snapshot(index: index, cursor: read.cursor) }
            unfiled = nil
            HeapTrim.after(handling: read.records.reduce(0) { $0 + $1.payload.count })
        }
    }

    /// Seconds since the Unix epoch, by the group's clock: the system's unless a test gave one.
    ///
    /// The system's is read directly, not kept as a closure: calling a stored closure retains
    /// and releases its context, two atomic operations on every lookup.
    func clock() -> Int64 {
        if let injectedClock { return injectedClock() }
        return Self.systemTime()
    }

    /// Seconds since the Unix epoch, from the system clock.
    ///
    /// The coarse clock: expiry is judged in whole seconds with a margin of minutes, and the
    /// coarse clock is a read of a word the kernel keeps, where the precise one reads the
    /// hardware clock on every lookup.
    static func systemTime() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &now)
        return Int64(now.tv_sec)
    }

    /// ``systemTime()`` as a closure, for what takes a clock.
    static let systemClock: @Sendable () -> Int64 = { systemTime() }

    /// Where the group lives, what protects it, and why that store was chosen.
    public var storeDescription: StoreDescription {
        var description = store.storeDescription
        if let reason { description.reason = reason }
        return description
    }

    /// The group's generation: bumped by every commit of any process.
    public var generation: UInt64 { store.currentGeneration() }

    /// The name ``RefreshLock`` knows the group by in this process: its name when its folder or
    /// its database's locks make the lock every process's, else (a group in this process's
    /// memory) its name and its store's identity, so that two memory groups of one name (every
    /// `CacheGroup(inMemory:)` takes the default one) never wait for each other's refreshes.
    var refreshLockName: String {
        guard store.groupDirectory == nil, store.groupLocks == nil else { return name }
        return "\(name)\n\(UInt(bitPattern: ObjectIdentifier(store)))"
    }

    /// The bytes a bounded group's entries take as its ``CacheConfiguration/memoryLimit``
    /// counts them (at most the limit after every write); `nil` for a group without a limit.
    public var memoryUse: Int? { bound?.accountedBytes }

    /// A stream with one element after each burst of commits to the group by any process (this
    /// one included): a hint to refresh what the app shows, never a change list. Events may
    /// coalesce but are never missed: after the last commit, at least one element follows.
    ///
    /// ```swift
    /// for await _ in try group.changes() {
    ///     let accounts = try cache.accounts()  // catches up with the other process's commit
    ///     print("now signed in:", accounts.map(\.username))
    /// }
    /// ```
    ///
    /// - Throws: ``TokenCacheError`` if the group's folder cannot be watched.
    public func changes() throws -> AsyncStream<Void> { try store.changes() }

    // MARK: - Reading

    /// The latest snapshot: the current one when nothing changed (one atomic load and one
    /// lock), else the current one caught up with what other processes committed.
    func snapshot() throws -> Snapshot {
        let generation = store.currentGeneration()
        // No reference to a stale snapshot may stay alive here: catching up updates the
        // installed one in place only when nothing else holds it.
        if let fresh = current.withLock({ $0.cursor.generation == generation ? $0 : nil }) { return fresh }
        do {
            return try catchUp()
        } catch let error as TokenCacheError where keepsServing(through: error) {
            // The database does not answer: what this instance holds is the answer until it does.
            return current.withLock { $0 }
        }
    }

    /// Whether `error` is the database not answering and the group keeps serving through that.
    func keepsServing(through error: TokenCacheError) -> Bool {
        error.code == .databaseUnavailable && outagePolicy == .keepInMemory
    }

    /// The index, fresh.
    func index() throws -> Index { try snapshot().index }

    /// The latest snapshot's index, with `partition` in it: loaded first when the store keeps
    /// only part of the group (``PartialStore``) and not it, as a lookup's ``find(in:_:)`` does.
    func index(keeping partition: CachePartition) throws -> Index {
        _ = try keep(partition)
        return try index()
    }

    /// What `lookUp` finds in the latest snapshot. When it finds nothing, it looks again where
    /// what it looks for may be that the snapshot does not show yet: for a store that keeps only
    /// part of the group (``PartialStore``) and not `partition`, after loading it; otherwise
    /// after asking the store whether another process committed something the generation does
    /// not show yet (``CacheStore/checkForChanges()``). A hit costs what it costs without this,
    /// and a miss never answers from before a write another process has finished.
    func find<Found>(in partition: @autoclosure () throws -> CachePartition? = nil, _ lookUp: (Snapshot) throws -> Found?)
        throws -> Found?
    {
        // The first snapshot is let go before a partition load, so that the load files the
        // partition into the installed snapshot in place when nothing else holds it.
        let seen: StoreCursor
        do {
            let first = try snapshot()
            if let found = try lookUp(first) { return found }
            seen = first.cursor
        }
        if let partial, let wanted = try partition(), !partial.keeps(wanted.storageKey) {
            // Loading the partition reads the store as it is now, which is what asking it for
            // changes would read: one round trip to a database, not two.
            do {
                if try keep(wanted) { return try lookUp(snapshot()) }
            } catch let error as TokenCacheError where keepsServing(through: error) {
                return nil  // a miss: the app asks the authority instead
            }
        }
        // Look again if anything moved since the first look, whether this check or a listener
        // of the store's moved it.
        _ = store.checkForChanges()
        let again = try snapshot()
        if again.cursor != seen, let found = try lookUp(again) { return found }
        return nil
    }

    private func catchUp() throws -> Snapshot {
        try catchUpLock.withLock { decoder in
            try fileUnfiled()
            while true {
                let cursor = current.withLock { $0.cursor }
                let update = try store.update(since: cursor)
                if case .unchanged(let now) = update, now == cursor { return current.withLock { $0 } }
                // Decode first (the part that can fail), then file under the lock; readers that
                // want this generation wait there rather than on `catchUpLock`.
                let decoded = try RecordCodec.decode(update, with: &decoder)
                if let caughtUp = install(decoded, from: cursor, to: update.cursor) {
                    return caughtUp
                }
            }
        }
    }

    /// Files `decoded` into the installed snapshot, which must be at `cursor` (else `nil`: a
    /// writer of this process published meanwhile), and returns the snapshot at `next`.
    private func install(_ decoded: RecordCodec.DecodedUpdate, from cursor: StoreCursor, to next: StoreCursor) -> Snapshot? {
        current.withLock { installed -> Snapshot? in
            guard installed.cursor == cursor else { return nil }
            if partial == nil { bound?.forget(leaving: installed.index, by: decoded) }
            if Snapshot.updatesInPlace, isKnownUniquelyReferenced(&installed) {
                installed.advance(decoded, to: next)
            } else {
                // A reader holds the snapshot: build the next one aside.
                var index = installed.index
                RecordCodec.file(decoded, into: &index)
                installed = Snapshot(index: index, cursor: next)
            }
            if partial != nil { bound?.account(decoded, in: installed.index) }
            return installed
        }
    }

    // MARK: - Keeping part of the group

    /// Loads `partition` when the store keeps only part of the group (``PartialStore``) and does
    /// not keep it yet; returns whether it did, when a lookup that missed should look again.
    /// The group then drops the least recently used partitions from memory if it holds more than
    /// its ``CacheConfiguration/memoryLimit``.
    @discardableResult
    func keep(_ partition: CachePartition, evenIfEmpty: Bool = false) throws -> Bool {
        guard let partial, !partial.keeps(partition.storageKey) else { return false }
        try writerLock.withLock { _ in try keepHoldingWriterLock([partition.storageKey], evenIfEmpty: evenIfEmpty) }
        return true
    }

    /// ``keep(_:)`` for the caller that holds `writerLock` (a writer of this process publishing
    /// meanwhile would install an index without the partitions).
    private func keepHoldingWriterLock(_ keys: [String], evenIfEmpty: Bool = true) throws {
        guard let partial else { return }
        try catchUpLock.withLock { decoder in
            let missing = keys.filter { !partial.keeps($0) }
            guard !missing.isEmpty else { return }
            let cursor = current.withLock { $0.cursor }
            do {
                let update = try partial.keep(missing, since: cursor, evenIfEmpty: evenIfEmpty)
                let decoded = try RecordCodec.decode(update, with: &decoder)
                // Nothing else installs while both locks are held.
                _ = install(decoded, from: cursor, to: update.cursor)
            } catch {
                partial.drop(missing)
                throw error
            }
        }
        dropLeastRecentlyUsed(sparing: Set(keys))
    }

    /// Drops whole partitions from memory, least recently used first, while the group holds more
    /// than its limit; never those in `sparing` (a lookup or a write is using them). The store
    /// stops keeping them only once no snapshot holds them, so a commit to one is never missed.
    /// Holds `writerLock`.
    private func dropLeastRecentlyUsed(sparing: @autoclosure () -> Set<String>) {
        guard let partial, let bound, bound.mayExceedLimit else { return }
        // Made only here: every partition load asks, and few find the group over its limit.
        let sparing = sparing()
        let dropped = catchUpLock.withLock { _ -> [CachePartition] in
            // Nothing else installs a snapshot while `writerLock` and `catchUpLock` are held, so
            // the plan and the smaller index are made outside `current`'s lock: every lookup
            // takes that lock, and the smaller index removes every entry dropped.
            let planned = current.withLock { $0 }
            let plan = bound.plan(sparing: sparing)
            guard !plan.partitions.isEmpty else { return [] }
            // Removed from the index, not deleted by a transaction: nothing is written.
            var index = planned.index
            for id in plan.ids { index.remove(id) }
            // A user's sign-in state is stored in the user's partition: the store stops telling
            // of its changes once the partition goes, so what this instance knew of it goes too.
            index.forgetStandings(of: Set(plan.partitions.lazy.filter { $0.holder == .user }.map { $0.key.lowercased() }))
            let next = Snapshot(index: index, cursor: planned.cursor)
            current.withLock { installed in
                assert(installed === planned, "a snapshot installed while writerLock and catchUpLock were held")
                installed = next
            }
            localChanges.add(1, ordering: .relaxed)
            // Under `catchUpLock` still: a catch-up between the two, to which the store still
            // keeps the partitions, would file their changes back into the snapshot, where
            // nothing would keep them current once the store stops keeping them.
            partial.drop(plan.partitions.map(\.storageKey))
            return plan.partitions
        }
        guard !dropped.isEmpty else { return }
        metrics.evictions.increment(by: Int64(dropped.count))
        logger.debug(
            "dropped partitions from memory to stay under the group's memory limit", metadata: ["partitions": "\(dropped.count)"])
    }

    /// Thrown from a write's transaction that put an entry into a partition the store does not
    /// keep: the write is rolled back, the partitions loaded, and the write run again on them.
    private struct PartitionsNotKept: Error {
        let keys: [String]
    }

    /// The partitions `transaction` put entries into, by ``CachePartition/storageKey``.
    private static func partitionKeys(putBy transaction: IndexTransaction) -> Set<String> {
        var keys: Set<String> = []
        for case .put(let record) in transaction.changes {
            if let partition = RecordCodec.signInPartition(of: record.id) {
                keys.insert(partition)
                continue
            }
            guard let kind = RecordCodec.credentialKind(record.id.kind),
                let stored = transaction.index[EntryID(kind: kind, keyText: record.id.nameText)],
                let partition = CachePartition(of: stored.entry)
            else { continue }
            keys.insert(partition.storageKey)
        }
        return keys
    }

    /// How many times a write loads partitions it found it needs before giving up.
    private static let partitionLoadAttempts = 3

    /// Installs `next` unless a newer snapshot is already there, and accounts the changes that
    /// made it (those of `update`, then `changes`) if it installed it; returns the one installed.
    @discardableResult
    private func publish(_ next: Snapshot, update: StoreUpdate, changes: [RecordChange] = []) -> Snapshot {
        current.withLock { installed in
            let newer =
                next.cursor.epoch != installed.cursor.epoch
                ? next.cursor.generation >= installed.cursor.generation || next.cursor.epoch > installed.cursor.epoch
                : next.cursor.generation >= installed.cursor.generation
            guard newer else { return installed }
            installed = next
            if let bound, partial != nil {
                switch update {
                case .unchanged: bound.account(then: changes, in: next.index)
                case .changes(let others, _): bound.account(others, then: changes, in: next.index)
                case .reload: bound.account(next.index)
                }
            }
            return installed
        }
    }

    // MARK: - Writing

    /// Runs `body` as one transaction: under the group's lock, on an index caught up with
    /// every commit, persisting what it changed durably, all or nothing.
    func write<Result>(_ body: (inout IndexTransaction) throws -> Result) throws -> Result {
        var result: Result?
        try writerLock.withLock { _ in
            // Writes kept in memory go first, in the order made; while they cannot, this one
            // joins them.
            if pending.withLock({ !$0.changes.isEmpty }) {
                do {
                    try commitPendingHoldingWriterLock()
                } catch let error as TokenCacheError where keepsServing(through: error) {
                    return try writeInMemory(body, into: &result)
                }
            }
            var attempt = 1
            while true {
                do {
                    let touched = try write(body, into: &result)
                    dropLeastRecentlyUsed(sparing: touched)
                    return
                } catch let error as TokenCacheError where keepsServing(through: error) {
                    return try writeInMemory(body, into: &result)
                } catch let needed as PartitionsNotKept where attempt < Self.partitionLoadAttempts {
                    do {
                        try keepHoldingWriterLock(needed.keys)
                    } catch let error as TokenCacheError where keepsServing(through: error) {
                        return try writeInMemory(body, into: &result)
                    }
                    attempt += 1
                } catch let needed as PartitionsNotKept {
                    throw TokenCacheError(
                        .invalidArgument,
                        "a write needs \(needed.keys.count) partitions in memory at once and the group's memory limit does not "
                            + "hold them; raise CacheConfiguration.memoryLimit")
                }
            }
        }
        return result!
    }

    // MARK: - Writes while the database does not answer

    /// The writes kept in memory while the database did not answer.
    struct PendingWrites {
        /// Their changes, in the order made.
        var changes: [RecordChange] = []
        /// The cursor the first of them was made on: what was committed after it is checked for
        /// other instances' writes (``toCommit(_:over:)``).
        var base: StoreCursor?
        /// How many writes.
        var writes = 0
        /// Whether a retry is scheduled.
        var retrying = false
        /// The wait before the next retry.
        var wait: Duration = PendingWrites.firstWait

        static let firstWait: Duration = .milliseconds(500)
        static let longestWait: Duration = .seconds(5)

        /// What of `changes`, the writes kept in memory in the order made, to commit on top of
        /// `update`, what the database holds since the first of them:
        ///
        /// - a record whose last commit since then is another instance's keeps it, unless this
        ///   instance's last change to it removes it: a sign-out or a removal that returned stays
        ///   one, whatever another instance that had not heard of it wrote meanwhile;
        /// - a commit since then that holds this instance's own change (one that reached the
        ///   database though its answer did not come back) is no conflict: what this instance
        ///   changed after it is committed too;
        /// - after a reload (the database no longer holds the history since then, which tells
        ///   whose write each record is), every change is committed as made, as a write made then
        ///   would have been.
        static func toCommit(_ changes: [RecordChange], over update: StoreUpdate) -> [RecordChange] {
            guard case .changes(let others, _) = update, !others.isEmpty else { return changes }
            var lastCommitted: [RecordID: RecordChange] = [:]
            for change in others { lastCommitted[change.id] = change }
            var ours: [RecordID: [RecordChange]] = [:]
            for change in changes where lastCommitted[change.id] != nil { ours[change.id, default: []].append(change) }
            // The records another instance wrote last, each with whether this instance removes it.
            var theirs: [RecordID: Bool] = [:]
            for (id, made) in ours where !made.contains(where: { Self.same($0, lastCommitted[id]!) }) {
                if case .delete = made.last! { theirs[id] = true } else { theirs[id] = false }
            }
            guard !theirs.isEmpty else { return changes }
            var removalsLeft = ours.filter { theirs[$0.key] == true }.mapValues(\.count)
            return changes.filter { change in
                guard let removes = theirs[change.id] else { return true }
                guard removes else { return false }
                // Only the last change to the record, its removal.
                removalsLeft[change.id]! -= 1
                return removalsLeft[change.id] == 0
            }
        }

        /// Whether two changes to a record leave it the same: both remove it, or both put the
        /// same bytes.
        private static func same(_ one: RecordChange, _ other: RecordChange) -> Bool {
            switch (one, other) {
            case (.delete, .delete): true
            case (.put(let a), .put(let b)): a.payload.elementsEqual(b.payload)
            default: false
            }
        }
    }

    /// How many writes this instance made while its database did not answer and has not committed
    /// yet (``CacheConfiguration/DatabaseOutagePolicy/keepInMemory``): 0 when everything is in the
    /// database. Its lookups already answer from them; the other instances do not see them yet.
    public var pendingWrites: Int { pending.withLock { $0.writes } }

    /// Applies `body` to what this instance holds only, and keeps its changes to commit when the
    /// database answers again. Holds `writerLock`.
    private func writeInMemory<Result>(_ body: (inout IndexTransaction) throws -> Result, into result: inout Result?) throws {
        while true {
            let start = current.withLock { $0 }
            var transaction = IndexTransaction(start.index, signInStatePerAccount: partial != nil)
            result = try body(&transaction)
            let changes = transaction.recordChanges
            guard !changes.isEmpty else { return }
            let installed = current.withLock { installed -> Bool in
                // A catch-up installed meanwhile: apply the write to what it installed.
                guard installed === start else { return false }
                installed = Snapshot(index: transaction.index, cursor: start.cursor)
                if partial != nil { bound?.account(then: transaction.changes, in: transaction.index) }
                return true
            }
            guard installed else { continue }
            // At the same generation as before: remembered answers must not outlive it.
            localChanges.add(1, ordering: .relaxed)
            let first = pending.withLock { pending -> Bool in
                pending.base = pending.base ?? start.cursor
                pending.changes += changes
                pending.writes += 1
                return pending.writes == 1
            }
            if first {
                logger.warning(
                    "the database does not answer: writes are kept in this instance's memory and committed when it answers again",
                    metadata: ["group": "\(name)"])
            }
            scheduleRetry()
            return
        }
    }

    /// Commits the writes kept in memory on top of what the others committed since the first of
    /// them (``PendingWrites/toCommit(_:over:)``). Holds `writerLock`.
    private func commitPendingHoldingWriterLock() throws {
        let (changes, base, writes) = pending.withLock { ($0.changes, $0.base, $0.writes) }
        guard let base, !changes.isEmpty else { return }
        if partial != nil {
            // The partitions they touch are read in full, so that another instance's commits to
            // them show up as changes since `base`.
            var keys: Set<String> = []
            for case .put(let record) in changes {
                if case .insert(let stored)? = try? RecordCodec.decode(record),
                    let partition = CachePartition(of: stored.entry)
                {
                    keys.insert(partition.storageKey)
                }
            }
            try keepHoldingWriterLock(Array(keys))
        }
        _ = try store.transact(since: base) { transaction in
            PendingWrites.toCommit(changes, over: transaction.update)
        }
        pending.withLock { $0 = PendingWrites() }
        logger.notice(
            "the database answers again: committed the writes kept in memory meanwhile",
            metadata: ["group": "\(name)", "writes": "\(writes)"])
    }

    /// Tries to commit the writes kept in memory after a wait, and again, waiting longer each
    /// time, until they are committed.
    private func scheduleRetry() {
        let wait = pending.withLock { pending -> Duration? in
            guard !pending.retrying, !pending.changes.isEmpty else { return nil }
            pending.retrying = true
            defer { pending.wait = min(pending.wait * 2, PendingWrites.longestWait) }
            return pending.wait
        }
        guard let wait else { return }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now(after: wait)) { [weak self] in
            guard let self else { return }
            pending.withLock { $0.retrying = false }
            do {
                try writerLock.withLock { _ in try commitPendingHoldingWriterLock() }
            } catch {
                scheduleRetry()
            }
        }
    }

    /// One attempt of ``write(_:)``, holding `writerLock`: returns the partitions the write put
    /// entries into (by ``CachePartition/storageKey``) when the store keeps part of the group.
    private func write<Result>(_ body: (inout IndexTransaction) throws -> Result, into result: inout Result?) throws
        -> Set<String>
    {
        var touched: Set<String> = []
        do {
            try fileUnfiled()
            let start = current.withLock { $0 }
            var caughtUp: Snapshot?
            var written: Index?
            // What the snapshots are accounted with, by the last run of the body: a store may run
            // it again on newer rows.
            var update = StoreUpdate.unchanged(start.cursor)
            var changes: [RecordChange] = []
            do {
                let cursor = try store.transact(since: start.cursor) { storeTransaction in
                    var index = start.index
                    try RecordCodec.apply(storeTransaction.update, to: &index)
                    update = storeTransaction.update
                    caughtUp = Snapshot(index: index, cursor: storeTransaction.update.cursor)
                    var transaction = IndexTransaction(index, signInStatePerAccount: partial != nil)
                    if storeTransaction.compacting {
                        // Rule 7: expired access tokens go at compaction, not on reads.
                        for id in index.expiredAccessTokens(now: clock()) { transaction.delete(id) }
                    }
                    result = try body(&transaction)
                    if let partial {
                        touched = Self.partitionKeys(putBy: transaction)
                        let missing = touched.filter { !partial.keeps($0) }
                        guard missing.isEmpty else { throw PartitionsNotKept(keys: Array(missing)) }
                        changes = transaction.changes
                    } else if let bound {
                        let settled = bound.settle(
                            &transaction, before: index, generation: storeTransaction.update.cursor.generation, now: clock())
                        if settled.evicted > 0 {
                            metrics.evictions.increment(by: Int64(settled.evicted))
                            logger.debug(
                                "evicted entries to stay under the group's memory limit",
                                metadata: ["evicted": "\(settled.evicted)", "expired": "\(settled.expired)"])
                        }
                    }
                    written = transaction.index
                    return transaction.takeRecordChanges()
                }
                bound?.committed(at: cursor.generation)
                if let written { publish(Snapshot(index: written, cursor: cursor), update: update, changes: changes) }
            } catch {
                if let caughtUp { publish(caughtUp, update: update) }
                throw error
            }
        }
        return touched
    }

    // MARK: - Group-wide operations

    /// Removes an account and everything of it, for every client of the group (a "wipe";
    /// per-client sign-out is ``TokenCache/signOut(_:)``). Returns how many entries went.
    @discardableResult
    public func wipe(_ account: Account) throws -> Int {
        let homeAccount = account.homeAccountId.normalised
        // What is not in memory is wiped too.
        try keep(.user(account.homeAccountId))
        return try write { transaction in
            let doomed = transaction.index.entries(account: homeAccount)
            for stored in doomed { transaction.delete(stored.id) }
            for client in transaction.index.clientStates.keys {
                transaction.updateClientState(client) { $0.forget(homeAccount) }
            }
            return doomed.count
        }
    }

    /// Deletes every access token already expired. Returns how many went.
    @discardableResult
    public func purgeExpiredAccessTokens() throws -> Int {
        try write { transaction in
            let expired = transaction.index.expiredAccessTokens(now: clock())
            for id in expired { transaction.delete(id) }
            return expired.count
        }
    }

    /// Merges an MSAL JSON cache (any SDK's) into the group in one transaction. Entries keep
    /// their keys; an entry under a key the group already has replaces it in place. Returns the
    /// number of entries imported. A malformed file (not JSON, not an MSAL cache's layout, or a
    /// name that one of its objects repeats) throws `.malformedCache` saying where, and imports
    /// nothing.
    @discardableResult
    public func importMSAL(_ json: some Collection<UInt8>) throws -> Int {
        try importMSAL(json, document: try MSALDocument.read(json))
    }

    /// An MSAL JSON cache read and checked whole, nothing imported: a tool that must not make a
    /// group for a file that is no cache reads the file before it opens the group.
    package struct CheckedMSALDocument {
        fileprivate let json: [UInt8]
        fileprivate let document: MSALDocument.Records

        /// `json` read, and checked as ``CacheGroup/importMSAL(_:)`` checks it.
        ///
        /// - Throws: what ``CacheGroup/importMSAL(_:)`` throws for a malformed file.
        package init(_ json: [UInt8]) throws {
            document = try MSALDocument.read(json)
            try json.withUnsafeBufferPointer(MSALDocument.checkNoRepeatedName)
            self.json = json
        }
    }

    /// Merges a document read and checked before, as ``importMSAL(_:)`` merges its bytes.
    @discardableResult
    package func importMSAL(_ checked: CheckedMSALDocument) throws -> Int {
        try importMSAL(checked.json, document: checked.document)
    }

    private func importMSAL(_ json: some Collection<UInt8>, document: MSALDocument.Records) throws -> Int {
        defer { HeapTrim.after(handling: json.count) }
        // Throws where an object of the document repeats a name, saying where.
        let checkNoRepeatedName = {
            try json.withContiguousStorageIfAvailable(MSALDocument.checkNoRepeatedName)
                ?? Array(json).withUnsafeBufferPointer(MSALDocument.checkNoRepeatedName)
        }
        return try write { transaction in
            // Two entries with one id stop a filing in one pass: a key its section repeats is
            // refused there, before the entries would be filed one by one. (Two spellings of one
            // section, IdToken and IDToken, may name one key: those are filed, the later kept.)
            let imported = try MSALDocument.merge(document, into: &transaction, repeatedID: checkNoRepeatedName)
            // Fewer than were read: a section repeats a key. Nothing is filed; say where.
            if imported < document.entries.count { try checkNoRepeatedName() }
            return imported
        }
    }

    /// The group as an MSAL JSON cache, byte for byte what msal-python 1.39.0's `serialize()`
    /// writes for the same cache.
    ///
    /// - Parameter includeSecrets: when `false` (the default), secrets are left out: the
    ///   result shows what is cached without exposing a token.
    public func exportMSAL(includeSecrets: Bool = false) throws -> [UInt8] {
        MSALDocument.export(try index(), includeSecrets: includeSecrets)
    }

    /// Counts of what the group holds.
    ///
    /// A group opened only to be inspected (``openExisting(_:configuration:)``) is counted from
    /// the records its open read, without filing them into an index, unless it changed since.
    public func statistics() throws -> Statistics {
        let now = clock()
        // Counted outside the lock: a first read files the records meanwhile without waiting for
        // the count, and the records counted stay as the open read them.
        if let read = unfiled.withLock({ $0 }), read.cursor.generation == store.currentGeneration() {
            return try GroupCount(records: read.records, now: now).statistics(generation: read.cursor.generation)
        }
        return GroupCount(index: try index(), now: now).statistics(generation: store.currentGeneration())
    }

    /// Counts of what a group holds (for `cachetool status`).
    public struct Statistics: Sendable, Hashable {
        /// How many entries of each kind.
        public var countByKind: [CredentialKind: Int]
        /// How many distinct home accounts have an account entry.
        public var accounts: Int
        /// The client ids with entries in the group (lower-cased).
        public var clients: [String]
        /// How many access tokens have expired.
        public var expiredAccessTokens: Int
        /// The group's generation.
        public var generation: UInt64
    }
}
