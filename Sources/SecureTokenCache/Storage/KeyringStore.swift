/// A group's sealed records kept in the freedesktop Secret Service (the desktop keyring).
///
/// The group has two items in the default collection, both with only the schema, the group and a
/// role as attributes: its key (``KeyringKeyProvider``) and one "records" item holding a
/// ``KeyringSnapshot`` of every record, sealed under that key. A write takes the group lock
/// (under `$XDG_RUNTIME_DIR/secure-token-cache/<group>/`), reads the item, applies the changes,
/// writes the item, and bumps the shared generation counter. ``currentGeneration()`` is one
/// atomic load; ``update(since:)`` reads the item only when the generation moved.
///
/// A locked, missing or unreachable keyring is always a typed error, never an empty group.
final class KeyringStore: CacheStore {
    /// The group this store holds.
    let group: String
    let storeDescription: StoreDescription

    private let client: KeyringClient
    private let sealer: RecordSealer
    private let lock: KeyringGroupLock
    private let counter: KeyringGenerationCounter

    /// Opens `group` in the Secret Service, creating its key on first use.
    ///
    /// - Parameters:
    ///   - options: time limits and whether an unlock prompt may be shown.
    ///   - runtimeDirectory: where the lock and counter folder goes; `nil` means `$XDG_RUNTIME_DIR`.
    ///   - lockTimeout: how long a write waits for another process's write.
    /// - Throws: ``TokenCacheError`` — ``TokenCacheError/Code/noSessionBus``,
    ///   ``TokenCacheError/Code/secretServiceUnavailable``, ``TokenCacheError/Code/collectionLocked``,
    ///   ``TokenCacheError/Code/keyringTimeout`` and the other codes of the parts.
    init(
        group: String,
        options: KeyringOptions = KeyringOptions(),
        runtimeDirectory: String? = nil,
        lockTimeout: Duration = .seconds(10)
    ) throws {
        try KeyringGroupDirectory.validateGroupName(group)
        self.group = group
        client = KeyringClient(schema: .group, options: options)
        // Availability first: "no bus", "no service" and "locked" are the answers a caller acts on.
        try client.requireUnlocked()
        let directory = try KeyringGroupDirectory(group: group, runtimeDirectory: runtimeDirectory)
        lock = KeyringGroupLock(directory: directory, timeout: lockTimeout)
        counter = try KeyringGenerationCounter(directory: directory)
        let key = try KeyringKeyProvider(group: group, client: client, lock: lock).groupKey()
        sealer = try RecordSealer(groupKey: key, groupName: group)
        storeDescription = StoreDescription(
            kind: .keyring,
            location: "Secret Service default collection, schema \(KeyringSchema.group.name), group \(group)",
            protection: KeyringKeyProvider.protectionLevel,
            reason: "a keyring store was requested"
        )
        // A fresh counter file (XDG_RUNTIME_DIR is emptied at logout) starts at 0 while the
        // keyring keeps its sequence: catch the counter up once, so readers do not re-read.
        try lock.withLock {
            let snapshot = try readSnapshot()
            if counter.load() < snapshot.sequence { counter.store(snapshot.sequence) }
        }
    }

    /// The attributes of the group's records item.
    private var recordsAttributes: [String: String] { ["group": group, "role": "records"] }

    private func cursor(_ sequence: UInt64) -> StoreCursor {
        StoreCursor(generation: sequence, epoch: 0, position: 0)
    }

    /// Reads and opens the records item (one D-Bus lookup).
    private func readSnapshot() throws -> KeyringSnapshot {
        let published = counter.load()
        let snapshot = try client.withSecret(attributes: recordsAttributes) { bytes in
            try KeyringSnapshot.open(bytes, with: sealer)
        }
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

    func currentGeneration() -> UInt64 { counter.load() }

    func load() throws -> ([Record], StoreCursor) {
        let snapshot = try readSnapshot()
        return (Array(snapshot.records.values), cursor(snapshot.sequence))
    }

    func update(since cursor: StoreCursor) throws -> StoreUpdate {
        guard cursor.generation != counter.load() else { return .unchanged(cursor) }
        return Self.update(from: try readSnapshot(), since: cursor)
    }

    private static func update(from snapshot: KeyringSnapshot, since cursor: StoreCursor) -> StoreUpdate {
        let current = StoreCursor(generation: snapshot.sequence, epoch: 0, position: 0)
        guard snapshot.sequence != cursor.generation || cursor.epoch != 0 else { return .unchanged(current) }
        // The item holds a snapshot, not a history: a reader that is behind reloads everything.
        return .reload(Array(snapshot.records.values), current)
    }

    func transact(since cursor: StoreCursor, _ body: (StoreTransaction) throws -> [RecordChange]) throws -> StoreCursor {
        try lock.withLock {
            var snapshot = try readSnapshot()
            let changes = try body(StoreTransaction(update: Self.update(from: snapshot, since: cursor), compacting: false))
            guard !changes.isEmpty else { return self.cursor(snapshot.sequence) }
            snapshot.apply(changes)
            snapshot.sequence += 1
            let sealed = try snapshot.sealed(with: sealer)
            try sealed.withUnsafeBytes { bytes in
                try client.store(bytes, label: "SecureTokenCache sealed records (\(group))", attributes: recordsAttributes)
            }
            // Published only after the Secret Service accepted the item: readers never see a
            // generation whose data is not there.
            counter.store(snapshot.sequence)
            return self.cursor(snapshot.sequence)
        }
    }
}
