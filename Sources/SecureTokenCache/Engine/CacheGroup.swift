import CoreMetrics
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

        /// Applies a decoded update in place; see the type's rule for when that is allowed.
        fileprivate func advance(_ update: RecordCodec.DecodedUpdate, to cursor: StoreCursor) {
            RecordCodec.file(update, into: &index)
            self.cursor = cursor
        }
    }

    /// The group's name.
    public let name: String
    let store: any CacheStore
    let clock: @Sendable () -> Int64
    /// Where the group and its caches say what an operator needs to know (never a token, a
    /// secret or a user name).
    let logger: Logger
    /// The group's size limit (``CacheConfiguration/memoryLimit``); `nil` for an unbounded group.
    let bound: CacheBound?
    /// What the group counts for dashboards.
    let metrics: CacheMetrics
    /// Why the store was chosen, when the opener knows better than the store.
    private let reason: String?
    private let current: Mutex<Snapshot>
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

    init(
        name: String, store: any CacheStore, clock: @escaping @Sendable () -> Int64 = CacheGroup.systemClock,
        reason: String? = nil, logger: Logger = .discarding, memoryLimit: Int? = nil
    ) throws {
        self.name = name
        self.logger = logger
        bound = memoryLimit.map(CacheBound.init(limit:))
        metrics = CacheMetrics(group: name)
        self.store = store
        self.clock = clock
        self.reason = reason
        let (records, cursor) = try store.load()
        current = Mutex(Snapshot(index: try RecordCodec.build(records), cursor: cursor))
    }

    /// Seconds since the Unix epoch, from the system clock.
    ///
    /// The coarse clock: expiry is judged in whole seconds with a margin of minutes, and the
    /// coarse clock is a read of a word the kernel keeps, where the precise one reads the
    /// hardware clock on every lookup.
    static let systemClock: @Sendable () -> Int64 = {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &now)
        return Int64(now.tv_sec)
    }

    /// Where the group lives, what protects it, and why that store was chosen.
    public var storeDescription: StoreDescription {
        var description = store.storeDescription
        if let reason { description.reason = reason }
        return description
    }

    /// The group's generation: bumped by every commit of any process.
    public var generation: UInt64 { store.currentGeneration() }

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
        return try catchUp()
    }

    /// The index, fresh.
    func index() throws -> Index { try snapshot().index }

    /// What `lookUp` finds in the latest snapshot. When it finds nothing, the store is asked
    /// whether another process committed something the generation does not show yet
    /// (``CacheStore/checkForChanges()``), and if so `lookUp` runs once more on the snapshot
    /// caught up with it: a hit costs what it costs without this, and a miss never answers from
    /// before a write another process has finished.
    func find<Found>(_ lookUp: (Snapshot) throws -> Found?) throws -> Found? {
        if let found = try lookUp(snapshot()) { return found }
        guard store.checkForChanges() else { return nil }
        return try lookUp(snapshot())
    }

    private func catchUp() throws -> Snapshot {
        try catchUpLock.withLock { decoder in
            while true {
                let cursor = current.withLock { $0.cursor }
                let update = try store.update(since: cursor)
                if case .unchanged(let now) = update, now == cursor { return current.withLock { $0 } }
                // Decode first (the part that can fail), then file under the lock; readers that
                // want this generation wait there rather than on `catchUpLock`.
                let decoded = try RecordCodec.decode(update, with: &decoder)
                let caughtUp = current.withLock { installed -> Snapshot? in
                    // A writer of this process published meanwhile: read the store again.
                    guard installed.cursor == cursor else { return nil }
                    if isKnownUniquelyReferenced(&installed) {
                        installed.advance(decoded, to: update.cursor)
                    } else {
                        // A reader holds the snapshot: build the next one aside.
                        var index = installed.index
                        RecordCodec.file(decoded, into: &index)
                        installed = Snapshot(index: index, cursor: update.cursor)
                    }
                    return installed
                }
                if let caughtUp { return caughtUp }
            }
        }
    }

    /// Installs `next` unless a newer snapshot is already there; returns the one installed.
    @discardableResult
    private func publish(_ next: Snapshot) -> Snapshot {
        current.withLock { installed in
            let newer =
                next.cursor.epoch != installed.cursor.epoch
                ? next.cursor.generation >= installed.cursor.generation || next.cursor.epoch > installed.cursor.epoch
                : next.cursor.generation >= installed.cursor.generation
            if newer { installed = next }
            return installed
        }
    }

    // MARK: - Writing

    /// Runs `body` as one transaction: under the group's lock, on an index caught up with
    /// every commit, persisting what it changed durably, all or nothing.
    func write<Result>(_ body: (inout IndexTransaction) throws -> Result) throws -> Result {
        var result: Result?
        try writerLock.withLock { _ in
            let start = current.withLock { $0 }
            var caughtUp: Snapshot?
            var written: Index?
            do {
                let cursor = try store.transact(since: start.cursor) { storeTransaction in
                    var index = start.index
                    try RecordCodec.apply(storeTransaction.update, to: &index)
                    caughtUp = Snapshot(index: index, cursor: storeTransaction.update.cursor)
                    var transaction = IndexTransaction(index)
                    if storeTransaction.compacting {
                        // Rule 7: expired access tokens go at compaction, not on reads.
                        for id in index.expiredAccessTokens(now: clock()) { transaction.delete(id) }
                    }
                    result = try body(&transaction)
                    if let bound {
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
                    return transaction.recordChanges
                }
                bound?.committed(at: cursor.generation)
                if let written { publish(Snapshot(index: written, cursor: cursor)) }
            } catch {
                if let caughtUp { publish(caughtUp) }
                throw error
            }
        }
        return result!
    }

    // MARK: - Group-wide operations

    /// Removes an account and everything of it, for every client of the group (a "wipe";
    /// per-client sign-out is ``TokenCache/signOut(_:)``). Returns how many entries went.
    @discardableResult
    public func wipe(_ account: Account) throws -> Int {
        let homeAccount = account.homeAccountId.normalised
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
    /// number of entries imported. A malformed file throws `.malformedCache` and imports nothing.
    @discardableResult
    public func importMSAL(_ json: some Collection<UInt8>) throws -> Int {
        let parsed = try MSALDocument.parse(json)
        return try write { transaction in
            MSALDocument.merge(parsed, into: &transaction)
            return parsed.entryCount
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
    public func statistics() throws -> Statistics {
        let index = try index()
        let now = clock()
        var expired = 0
        for stored in index.entries.values {
            if case .accessToken(let token) = stored.entry, token.expiresOn <= now { expired += 1 }
        }
        var clients = Set<String>()
        for stored in index.entries.values {
            if let client = stored.entry.client { clients.insert(client) }
        }
        return Statistics(
            countByKind: index.countByKind.filter { $0.value > 0 },
            accounts: index.accountsByHome.count,
            clients: clients.sorted(),
            expiredAccessTokens: expired,
            generation: store.currentGeneration()
        )
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
