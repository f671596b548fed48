import Dispatch
import Logging

/// A group kept in a database as one sealed row per record (``RowDatabase``): the store seam
/// over a database that many processes on many machines share.
///
/// Each row holds one record sealed on its own (a batch of one, ``RecordSealer``), whose
/// associated data binds the group and the row's version, and whose plaintext names the record;
/// the row is keyed by the record's keyed name (``RecordSealer/keyedName(of:)``). So the database
/// holds no name, scope, account or token in clear, and a row copied to another group, another
/// name or another version fails to open (``TokenCacheError/Code/storeCorrupted``). Beside the
/// sealed record a row carries its partition's keyed name (``RecordSealer/keyedPartition(_:)``)
/// and, for an access token, its expiry: what lets an instance load one caller's rows, and a
/// sweep find what expired, without opening anything.
///
/// The generation is the group's commit count in the database, as this process knows it
/// (``RowGroupWatch``): one atomic load, moved by this process's commits at once and by the
/// others' when their announcement arrives. A deleted record leaves a deletion row, so a reader
/// that is behind replays only what changed; every ``sweepInterval`` commits, a sweep in the
/// background deletes the access tokens that expired and the partitions nobody wrote for
/// ``RowStoreOptions/idlePartitionAge``, and the deletion rows older than ``historyKept``
/// commits go (a reader further behind reloads).
///
/// With ``RowStoreOptions/keepsPart``, the store keeps only the partitions its process asked for
/// (``PartialStore``): a fleet's database holds every caller of every instance, and each
/// instance keeps in memory those it serves. Its generation then moves only for the commits
/// that touched them (``RowResidency``), as the announcements name each commit's partitions.
final class RowStore: CacheStore, PartialStore {
    let storeDescription: StoreDescription
    /// None: processes meet in the database, not in a folder.
    var groupDirectory: GroupDirectory? { nil }

    private let database: any RowDatabase
    private let group: [UInt8]
    private let sealer: RecordSealer
    /// The group's generation as the process knows it; tests wait on it to know what was heard.
    let watch: RowGroupWatch
    private let options: RowStoreOptions
    /// The partitions kept, when the store keeps only part of the group.
    private let residency: RowResidency?
    private let logger: Logger

    /// Opens group `name` in `database`, creating it with a key from `keyProvider` unless it
    /// exists (or `creating` is false: then a missing group is ``TokenCacheError/Code/notFound``).
    ///
    /// - Throws: ``TokenCacheError/Code/wrongKey`` when the key does not open the group, the
    ///   database's errors, or ``TokenCacheError/Code/storeCorrupted`` for a damaged head.
    init(
        name: String, database: any RowDatabase, keyProvider: any KeyProvider, protectionReason reason: String,
        creating: Bool = true, options: RowStoreOptions = RowStoreOptions(), logger: Logger = .discarding
    ) throws {
        let group = Self.groupID(name)
        var head = try database.head(of: group)
        var sealer: RecordSealer? = nil
        if head == nil {
            guard creating else {
                throw TokenCacheError(.notFound, "the database \(database.location) has no group \(name)")
            }
            let groupID = try Sodium.randomBytes(16)
            let provided = try keyProvider.makeKey(groupID: groupID, groupName: name)
            let source = provided.source
            let made = try RecordSealer(groupKey: provided.key, groupName: name)
            let header = try GroupHeader(groupID: groupID, keySource: source, sealer: made).encoded()
            let epoch = try Sodium.randomBytes(8).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            let created = try database.createGroup(group, header: header, epoch: epoch)
            if created.header == header { sealer = made }
            head = created
        }
        let header: GroupHeader
        do {
            header = try GroupHeader(decoding: head!.header)
        } catch {
            throw TokenCacheError(
                .storeCorrupted, "the head of group \(name) in \(database.location) is damaged: \(error); restore the database")
        }
        if sealer == nil {
            sealer = try RecordSealer(
                groupKey: keyProvider.key(for: header.keySource, groupID: header.groupID, groupName: name), groupName: name)
        }
        guard header.keyMatches(sealer!) else {
            throw TokenCacheError(
                .wrongKey,
                "the \(header.keySource.protectionLevel == .passphrase ? "passphrase" : "key") does not open the group \(name); every instance must use the same key source"
            )
        }
        self.database = database
        self.group = group
        self.sealer = sealer!
        self.options = options
        self.logger = logger
        watch = RowGroupWatch.watch(group, in: database)
        try watch.begin { try database.head(of: group)?.generation }
        watch.advance(to: head!.generation)
        if options.keepsPart {
            let residency = RowResidency()
            residency.advance(to: head!.generation)
            watch.register(residency)
            self.residency = residency
        } else {
            residency = nil
        }
        storeDescription = StoreDescription(
            kind: .postgres, location: database.location, protection: header.keySource.protectionLevel, reason: reason)
    }

    /// The group's id in the database: a BLAKE2b-256 of its name, so the name is not in clear.
    static func groupID(_ name: String) -> [UInt8] {
        Array("STCGROUP\(name)".utf8).withUnsafeBytes { Sodium.checksum($0) }
    }

    func currentGeneration() -> UInt64 { residency?.generation ?? watch.current }

    func changes() throws -> AsyncStream<Void> { watch.changes() }

    /// Reads the group's generation from the database: a commit of another instance whose
    /// announcement has not arrived yet (the token an instance stored while this one waited for
    /// its lock) is read before a miss is believed. A database that does not answer shows
    /// nothing new.
    func checkForChanges() -> Bool {
        guard let head = try? database.head(of: group) else { return false }
        let before = currentGeneration()
        watch.advance(to: head.generation)
        residency?.advance(to: head.generation)
        return currentGeneration() != before
    }

    /// What a read hands back: the whole group, or the rows of no partition and those kept.
    private func selection(loading: [[UInt8]] = []) -> RowSelection {
        guard let residency else { return .wholeGroup }
        return RowSelection(kept: { residency.all }, loading: loading)
    }

    func load() throws -> ([Record], StoreCursor) {
        let before = currentGeneration()
        let (head, rows) = try database.rows(of: group, epoch: 0, after: 0, selection: selection())
        watch.advance(to: head.generation)
        var records: [Record] = []
        records.reserveCapacity(rows.count)
        for row in rows where !row.isDeletion {
            guard case .put(let record) = try open(row) else { throw Self.damaged("a live row holds a deletion") }
            records.append(record)
        }
        return (records, cursor(head, seen: before))
    }

    func update(since cursor: StoreCursor) throws -> StoreUpdate {
        let before = currentGeneration()
        let (head, rows) = try database.rows(
            of: group, epoch: cursor.epoch, after: cursor.position, selection: selection())
        watch.advance(to: head.generation)
        return try update(head, rows, since: cursor, seen: before)
    }

    /// Every this many commits a sweep runs in the background.
    static let sweepInterval: UInt64 = 256
    /// How many commits of deletions are kept for readers to replay; one further behind reloads.
    static let historyKept: UInt64 = 1024

    func transact(since cursor: StoreCursor, _ body: (StoreTransaction) throws -> [RecordChange]) throws -> StoreCursor {
        if let committed = try transactIfStill(at: cursor, body) { return committed }
        let before = currentGeneration()
        let head = try database.commit(group, epoch: cursor.epoch, after: cursor.position, selection: selection()) {
            head, rows in
            let update = try update(head, rows, since: cursor, seen: before)
            let version = head.generation + 1
            let changes = try body(StoreTransaction(update: update, compacting: false))
            let rows = try seal(changes, at: version)
            let horizon = version > Self.historyKept ? version - Self.historyKept : nil
            return RowCommit(rows: rows, sweepingDeletionsThrough: version % Self.sweepInterval == 0 ? horizon : nil)
        }
        watch.advance(to: head.generation)
        residency?.advance(to: head.generation)
        if head.generation % Self.sweepInterval == 0, head.generation != cursor.generation {
            DispatchQueue.global(qos: .utility).async { [self] in
                do {
                    _ = try sweep(now: options.clock())
                } catch {
                    logger.warning("a sweep of the group's expired rows failed", metadata: ["error": "\(error)"])
                }
            }
        }
        return self.cursor(head, seen: head.generation)
    }

    /// ``transact(since:_:)`` in one round trip, when what the process holds is the group as it
    /// knows it now: `body` runs on that, and its rows are written only if the group is still
    /// there (a transaction that writes nothing only reads the head). `nil` when another commit
    /// came first: then nothing was written, and the transaction runs again on what that commit
    /// changed, holding the group's head.
    ///
    /// The process holds the group as it knows it when it heard of no commit after the one
    /// `cursor` was read at; a store that keeps part of the group, also when every commit since
    /// was heard, in order, and touched none of its partitions (the busy fleet's usual case).
    /// A commit that sweeps (every ``sweepInterval``) takes the long way, which moves the horizon.
    private func transactIfStill(at cursor: StoreCursor, _ body: (StoreTransaction) throws -> [RecordChange]) throws
        -> StoreCursor?
    {
        guard let at = currentAsHeld(since: cursor), (at + 1) % Self.sweepInterval != 0 else { return nil }
        let before = currentGeneration()
        let known = RowGroupHead(header: [], epoch: cursor.epoch, generation: at)
        let changes = try body(StoreTransaction(update: try update(known, [], since: cursor, seen: before), compacting: false))
        guard !changes.isEmpty else {
            guard let head = try database.head(of: group), head.epoch == cursor.epoch, head.generation == at
            else { return nil }
            return self.cursor(head, seen: before)
        }
        guard let head = try database.commit(group, epoch: cursor.epoch, ifStillAt: at, rows: seal(changes, at: at + 1))
        else { return nil }
        watch.advance(to: head.generation)
        residency?.advance(to: head.generation)
        return self.cursor(head, seen: head.generation)
    }

    /// The latest generation the process knows of, when what it holds since `cursor` is the group
    /// at that generation (see ``transactIfStill(at:_:)``); `nil` when it may not be.
    private func currentAsHeld(since cursor: StoreCursor) -> UInt64? {
        guard cursor.position > 0 else { return nil }
        // In this order: the residency has heard of every commit up to `heard` before `heard`
        // moved there.
        let latest = watch.current
        if latest == cursor.position { return latest }
        let heard = watch.heardThrough
        guard let residency, latest > cursor.position, heard == latest, residency.generation == cursor.generation
        else { return nil }
        return latest
    }

    /// `changes`, sealed into rows of version `version`: the last change to a record is the one
    /// its row keeps.
    private func seal(_ changes: [RecordChange], at version: UInt64) throws -> [SealedRow] {
        var rows: [[UInt8]: SealedRow] = [:]
        for change in changes {
            var sealed: [UInt8] = []
            try sealer.sealBatch(CollectionOfOne(change), firstSequence: version, appendingTo: &sealed)
            let name = sealer.keyedName(of: change.id)
            switch change {
            case .delete:
                rows[name] = SealedRow(name: name, version: version, isDeletion: true, sealed: sealed)
            case .put(let record):
                let traits = options.classify(record)
                rows[name] = SealedRow(
                    name: name, version: version, isDeletion: false, sealed: sealed,
                    partition: traits.partition.map(sealer.keyedPartition), expiresAt: traits.expiresAt)
            }
        }
        return Array(rows.values)
    }

    // MARK: Keeping part of the group

    var keepsPart: Bool { residency != nil }

    func keeps(_ partition: String) -> Bool {
        guard let residency else { return true }
        return residency.keeps(sealer.keyedPartition(partition))
    }

    func keep(_ partitions: [String], since cursor: StoreCursor, evenIfEmpty: Bool) throws -> StoreUpdate {
        guard let residency else { return try update(since: cursor) }
        var loading = partitions.map(sealer.keyedPartition)
        let before = currentGeneration()
        var selection = selection(loading: loading)
        selection.heardOfChanges = watch.current > cursor.position
        let (head, rows) = try database.rows(of: group, epoch: cursor.epoch, after: cursor.position, selection: selection)
        watch.advance(to: head.generation)
        if !evenIfEmpty {
            let held = Set(rows.lazy.filter { !$0.isDeletion }.compactMap(\.partition))
            loading.removeAll { !held.contains($0) }
        }
        residency.insert(loading)
        // A commit to these partitions announced before they were kept was not counted: catch up
        // again if the process heard of any commit this read may not hold.
        residency.advance(to: watch.current > head.generation ? watch.current : 0)
        return try update(head, rows, since: cursor, seen: before)
    }

    func drop(_ partitions: [String]) {
        residency?.remove(partitions.map(sealer.keyedPartition))
    }

    // MARK: Sweeping

    /// What one sweep did.
    struct Swept: Equatable {
        /// Records deleted because they expired.
        var expired = 0
        /// Records deleted because their partition was idle.
        var idle = 0
        /// Partitions forgotten.
        var partitions = 0
    }

    /// The most rows one sweep deletes: a sweep is one commit, and another follows.
    static let sweepBatch = 500

    /// Deletes, in one commit, the access tokens whose expiry is before `now` and the records of
    /// the partitions nobody wrote for ``RowStoreOptions/idlePartitionAge`` (at most
    /// ``sweepBatch`` rows), leaving deletion rows so that every reader drops them too.
    @discardableResult
    func sweep(now: Int64) throws -> Swept {
        let idleBefore = options.idlePartitionAge.map { now - Int64($0.components.seconds) }
        let found = try database.sweepCandidates(
            of: group, expiredBefore: now, idleBefore: idleBefore, limit: Self.sweepBatch)
        guard !found.rows.isEmpty || !found.idlePartitions.isEmpty else { return Swept() }
        let idle = Set(found.idlePartitions)
        var swept = Swept()
        let head = try database.commit(group, epoch: found.epoch, after: found.generation, selection: .wholeGroup) {
            head, changed in
            // A row written again since the candidates were read is not swept, and a partition
            // written since is no longer idle: none of its rows is swept (those that expired go
            // with a later sweep), and it is not forgotten.
            let rewritten = Set(changed.map(\.name))
            let revived = Set(changed.compactMap(\.partition)).intersection(idle)
            let forgotten = found.idlePartitions.filter { !revived.contains($0) }
            var deletions: [RecordChange] = []
            swept = Swept(partitions: forgotten.count)
            for row in found.rows where !rewritten.contains(row.name) {
                if let partition = row.partition, revived.contains(partition) { continue }
                deletions.append(.delete(try open(row).id))
                if let partition = row.partition, idle.contains(partition) { swept.idle += 1 } else { swept.expired += 1 }
            }
            return RowCommit(rows: try seal(deletions, at: head.generation + 1), forgetting: forgotten)
        }
        watch.advance(to: head.generation)
        if swept.expired + swept.idle > 0 {
            logger.debug(
                "swept the group's rows", metadata: ["expired": "\(swept.expired)", "idle": "\(swept.idle)"])
        }
        return swept
    }

    // MARK: Locks across machines

    /// The database's locks: a refresh or a token request on one instance makes the others
    /// wait, then find its token.
    var groupLocks: (any GroupLocks)? { self }

    // MARK: Rows to records

    /// The cursor after reading `head`: its generation is the store's, which for a store keeping
    /// part of the group is what this process knew before the read (`seen`), all of which the
    /// read holds; its position is the version the rows were read up to.
    private func cursor(_ head: RowGroupHead, seen: UInt64) -> StoreCursor {
        StoreCursor(generation: residency == nil ? head.generation : seen, epoch: head.epoch, position: head.generation)
    }

    /// Whether a row is one the store keeps.
    private func kept(_ row: SealedRow) -> Bool {
        guard let residency, let partition = row.partition else { return true }
        return residency.keeps(partition)
    }

    private func update(_ head: RowGroupHead, _ rows: [SealedRow], since cursor: StoreCursor, seen: UInt64) throws
        -> StoreUpdate
    {
        let now = self.cursor(head, seen: seen)
        if head.epoch != cursor.epoch || cursor.position == 0 || cursor.position < head.horizon {
            var records: [Record] = []
            for row in rows where !row.isDeletion {
                guard case .put(let record) = try open(row) else { throw Self.damaged("a live row holds a deletion") }
                records.append(record)
            }
            return head.generation == cursor.position && records.isEmpty ? .unchanged(now) : .reload(records, now)
        }
        let changes = try rows.lazy.filter(kept).map(open)
        return changes.isEmpty ? .unchanged(now) : .changes(changes, now)
    }

    /// The change a row holds, checked against the row: its version is the batch's sequence
    /// number (bound into the box) and its name is the record's keyed name.
    private func open(_ row: SealedRow) throws -> RecordChange {
        guard let change = try row.sealed.withUnsafeBytes({ try sealer.openRow($0, version: row.version, name: row.name) })
        else {
            throw Self.damaged("a row was moved or copied to another place")
        }
        if case .delete = change, !row.isDeletion { throw Self.damaged("a deletion row is marked live") }
        return change
    }

    private static func damaged(_ what: String) -> TokenCacheError {
        TokenCacheError(
            .storeCorrupted,
            "the group's rows in the database are damaged (\(what)); restore the database from a backup or clear the group")
    }
}

/// How a ``RowStore`` keeps its group.
struct RowStoreOptions: Sendable {
    /// Whether the store keeps only the partitions its process asks for (``PartialStore``).
    var keepsPart = false
    /// A partition no instance wrote for this long is swept; `nil` for never.
    var idlePartitionAge: Duration? = nil
    /// What the database may know of a record: its partition's ``CachePartition/storageKey`` and
    /// its expiry. Without it, every record belongs to no partition and never expires.
    var classify: @Sendable (Record) -> (partition: String?, expiresAt: Int64?) = { _ in (nil, nil) }
    /// Seconds since the Unix epoch, for expiry.
    var clock: @Sendable () -> Int64 = CacheGroup.systemClock
}

extension RowStore: GroupLocks {
    func withLock<Result: Sendable>(
        _ key: String, timeout: Duration, _ body: () async throws -> Result
    ) async throws -> Result {
        // The database sees a number: a hash of the group and the key (which names a client and
        // its scopes or account).
        let digest = (Array("STCLOCK".utf8) + group + Array(key.utf8)).withUnsafeBytes { Sodium.checksum($0, outputCount: 16) }
        let id = digest.withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(as: Int64.self)) }
        let release = try await database.lock(id, timeout: timeout)
        do {
            let result = try await body()
            await release()
            return result
        } catch {
            await release()
            throw error
        }
    }
}
