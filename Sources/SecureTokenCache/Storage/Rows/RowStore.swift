/// A group kept in a database as one sealed row per record (``RowDatabase``): the store seam
/// over a database that many processes on many machines share.
///
/// Each row holds one record sealed on its own (a batch of one, ``RecordSealer``), whose
/// associated data binds the group and the row's version, and whose plaintext names the record;
/// the row is keyed by the record's keyed name (``RecordSealer/keyedName(of:)``). So the database
/// holds no name, scope, account or token in clear, and a row copied to another group, another
/// name or another version fails to open (``TokenCacheError/Code/storeCorrupted``).
///
/// The generation is the group's commit count in the database, as this process knows it
/// (``RowGroupWatch``): one atomic load, moved by this process's commits at once and by the
/// others' when their announcement arrives. A deleted record leaves a deletion row, so a reader
/// that is behind replays only what changed; every ``sweepInterval`` commits, expired access
/// tokens are deleted and deletion rows older than ``historyKept`` commits are swept (a reader
/// further behind reloads).
final class RowStore: CacheStore {
    let storeDescription: StoreDescription
    /// None: processes meet in the database, not in a folder.
    var groupDirectory: GroupDirectory? { nil }

    private let database: any RowDatabase
    private let group: [UInt8]
    private let sealer: RecordSealer
    private let watch: RowGroupWatch

    /// Opens group `name` in `database`, creating it with a key from `keyProvider` unless it
    /// exists (or `creating` is false: then a missing group is ``TokenCacheError/Code/notFound``).
    ///
    /// - Throws: ``TokenCacheError/Code/wrongKey`` when the key does not open the group, the
    ///   database's errors, or ``TokenCacheError/Code/storeCorrupted`` for a damaged head.
    init(
        name: String, database: any RowDatabase, keyProvider: any KeyProvider, protectionReason reason: String,
        creating: Bool = true
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
        watch = RowGroupWatch.watch(group, in: database)
        watch.advance(to: head!.generation)
        storeDescription = StoreDescription(
            kind: .postgres, location: database.location, protection: header.keySource.protectionLevel, reason: reason)
    }

    /// The group's id in the database: a BLAKE2b-256 of its name, so the name is not in clear.
    static func groupID(_ name: String) -> [UInt8] {
        Array("STCGROUP\(name)".utf8).withUnsafeBytes { Sodium.checksum($0) }
    }

    func currentGeneration() -> UInt64 { watch.current }

    func changes() throws -> AsyncStream<Void> { watch.changes() }

    func load() throws -> ([Record], StoreCursor) {
        let (head, rows) = try database.rows(of: group, epoch: 0, after: 0)
        watch.advance(to: head.generation)
        var records: [Record] = []
        records.reserveCapacity(rows.count)
        for row in rows where !row.isDeletion {
            guard case .put(let record) = try open(row) else { throw Self.damaged("a live row holds a deletion") }
            records.append(record)
        }
        return (records, Self.cursor(head))
    }

    func update(since cursor: StoreCursor) throws -> StoreUpdate {
        let (head, rows) = try database.rows(of: group, epoch: cursor.epoch, after: cursor.generation)
        watch.advance(to: head.generation)
        return try update(head, rows, since: cursor)
    }

    /// Every this many commits one sweeps: the engine adds deletions of expired access tokens,
    /// and the deletion rows more than ``historyKept`` commits old go.
    static let sweepInterval: UInt64 = 256
    /// How many commits of deletions are kept for readers to replay; one further behind reloads.
    static let historyKept: UInt64 = 1024

    func transact(since cursor: StoreCursor, _ body: (StoreTransaction) throws -> [RecordChange]) throws -> StoreCursor {
        let head = try database.commit(group, epoch: cursor.epoch, after: cursor.generation) { head, rows in
            let update = try update(head, rows, since: cursor)
            let version = head.generation + 1
            let sweeping = version % Self.sweepInterval == 0
            let changes = try body(StoreTransaction(update: update, compacting: sweeping))
            // The last change to a record is the one its row keeps.
            var rows: [[UInt8]: SealedRow] = [:]
            for change in changes {
                var sealed: [UInt8] = []
                try sealer.sealBatch(CollectionOfOne(change), firstSequence: version, appendingTo: &sealed)
                let name = sealer.keyedName(of: change.id)
                if case .delete = change {
                    rows[name] = SealedRow(name: name, version: version, isDeletion: true, sealed: sealed)
                } else {
                    rows[name] = SealedRow(name: name, version: version, isDeletion: false, sealed: sealed)
                }
            }
            let horizon = version > Self.historyKept ? version - Self.historyKept : nil
            return RowCommit(rows: Array(rows.values), sweepingDeletionsThrough: sweeping ? horizon : nil)
        }
        watch.advance(to: head.generation)
        return Self.cursor(head)
    }

    // MARK: Locks across machines

    /// The database's locks: a refresh or a token request on one instance makes the others
    /// wait, then find its token.
    var groupLocks: (any GroupLocks)? { self }

    // MARK: Rows to records

    private static func cursor(_ head: RowGroupHead) -> StoreCursor {
        StoreCursor(generation: head.generation, epoch: head.epoch, position: head.generation)
    }

    private func update(_ head: RowGroupHead, _ rows: [SealedRow], since cursor: StoreCursor) throws -> StoreUpdate {
        let now = Self.cursor(head)
        if head.epoch != cursor.epoch || cursor.generation == 0 || cursor.generation < head.horizon {
            var records: [Record] = []
            for row in rows where !row.isDeletion {
                guard case .put(let record) = try open(row) else { throw Self.damaged("a live row holds a deletion") }
                records.append(record)
            }
            return head.generation == cursor.generation && records.isEmpty ? .unchanged(now) : .reload(records, now)
        }
        guard head.generation > cursor.generation else { return .unchanged(now) }
        return .changes(try rows.map(open), now)
    }

    /// The change a row holds, checked against the row: its version is the batch's sequence
    /// number (bound into the box) and its name is the record's keyed name.
    private func open(_ row: SealedRow) throws -> RecordChange {
        let batch = try row.sealed.withUnsafeBytes { try sealer.openBatch($0) }
        guard batch.firstSequence == row.version, batch.changes.count == 1, let change = batch.changes.first,
            sealer.keyedName(of: change.id) == row.name
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
