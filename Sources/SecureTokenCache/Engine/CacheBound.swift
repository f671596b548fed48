import HashTreeCollections
import Synchronization

/// The size limit of a bounded group (``CacheConfiguration/memoryLimit``), and what enforcing it
/// needs: how many bytes the group's entries take, and when each was last used.
///
/// A server that caches a token per caller (one on-behalf-of partition per user assertion, one
/// app partition per tenant) would otherwise grow without end. Each write that takes the group
/// past its limit also evicts, in the same transaction: every expired access token first, then
/// whole partitions (``CachePartition``), least recently used first, until the group is back
/// under ``targetFraction`` of the limit, so that the next writes do not evict again at once.
/// What this write stored is never evicted by it.
///
/// A group whose store keeps only part of it (``PartialStore``) evicts nothing: it drops
/// partitions from memory (``plan(sparing:)``), chosen from a ``PartitionLedger`` that every
/// snapshot it installs keeps up to date.
final class CacheBound: Sendable {
    /// The most bytes the group's entries may take, as ``cost(payloadBytes:)`` counts them.
    let limit: Int
    /// Where eviction stops, as a fraction of ``limit``.
    static let targetFraction = 0.75
    /// Where dropping partitions from memory stops, for a group whose store keeps only part of it,
    /// as a fraction of ``limit``. Nearer the limit than ``targetFraction``: the request whose load
    /// took the group past its limit waits for the drop, which costs what removing its entries
    /// from the index costs. Not at it: each drop also lets go of every cache's remembered
    /// answers (``TokenCache/Answers``).
    static let dropTargetFraction = 0.9

    private struct State {
        /// What the group's entries take, as of ``generation``.
        var accounted = 0
        /// The store generation ``accounted`` reflects; `nil` before the first count.
        var generation: UInt64?
        /// When each entry was last used (an answer or a write) and what it is accounted as, by
        /// its storage, which every copy of the entry shares. An entry's use goes when the entry
        /// leaves the group (replaced, deleted, evicted or dropped from memory), but one noted
        /// after a write replaced the entry is kept: its storage is then freed, and a new entry's
        /// storage at the same address must not inherit the use (``use(of:)`` tells them apart).
        /// Such a use goes with the next count of the partitions. In a group that keeps part of
        /// its store, each entry's use is its partition's.
        var used: [ObjectIdentifier: Use] = [:]
        /// What each partition in memory holds, for a group whose store keeps only part of it;
        /// `nil` for any other group, which accounts its entries as its writes change them.
        var ledger: PartitionLedger?

        /// The use kept for `entry`: none when the use under its storage's address is another
        /// entry's, freed since.
        func use(of entry: CacheEntry) -> Use? {
            guard let use = used[entry.storageIdentity], use.belongs(to: entry) else { return nil }
            return use
        }
    }

    /// An entry's last use and cost. A lookup that remembers its answer keeps the entry's use, so
    /// that answering again notes the use without the lock and the map.
    final class Use: Sendable {
        /// The use clock's value at the entry's last use.
        let tick: Atomic<UInt64>
        /// What the entry is accounted as.
        let bytes: Int
        /// The storage of the entry whose use this is, whose address is the use's key, held
        /// weakly: a use may outlive its entry's place in the group (an answer's use noted after a
        /// write replaced it), and it keeps nothing alive, but tells a new entry at the same
        /// address apart. `nil` for a partition's use too, which the ledger files and forgets
        /// with the snapshots it follows (``isPartitions``).
        private weak let storage: (any AnyObject & Sendable)?
        /// Whether this is a partition's use, which every entry of the partition shares.
        private let isPartitions: Bool

        /// A use at `tick` of `bytes`, the use of `entry` alone, or without one a partition's.
        init(tick: UInt64, bytes: Int, of entry: CacheEntry? = nil) {
            self.tick = Atomic(tick)
            self.bytes = bytes
            storage = entry?.storage
            isPartitions = entry == nil
        }

        /// Whether this is `entry`'s use (or its partition's), not that of an entry freed before
        /// whose storage had the same address.
        func belongs(to entry: CacheEntry) -> Bool { isPartitions || storage === entry.storage }
    }

    private let state = Mutex(State())
    /// The use clock: bumped by every use. Outside the state's lock, so that a use noted again
    /// (a ``Use``'s tick set to ``nextTick()``) takes none.
    private let clock = Atomic<UInt64>(0)

    /// The use clock's next value.
    func nextTick() -> UInt64 { clock.wrappingAdd(1, ordering: .relaxed).newValue }

    /// A bound of `limit` bytes; `keepsPart`: for a group whose store keeps only part of it
    /// (``PartialStore``), which reaches its limit by dropping partitions from memory.
    init(limit: Int, keepsPart: Bool = false) {
        self.limit = limit
        if keepsPart { state.withLock { $0.ledger = PartitionLedger() } }
    }

    /// What an entry whose record payload has `payloadBytes` bytes is accounted as: the store's
    /// copy of the record and the index's members (each string of an entry is held as a record
    /// byte run and as a `String` in its members), and a fixed part for the index's maps, the
    /// entry's parsed values, its use record and the allocator's share. Calibrated with
    /// `PeerCompare bounded-obo`, which checks the process's resident memory against the limit.
    static func cost(payloadBytes: Int) -> Int { 4 * payloadBytes + entryOverhead }

    /// The fixed part of ``cost(payloadBytes:)``.
    static let entryOverhead = 4_096

    /// Notes that `entry` answered a lookup. An entry read from the store that the group has not
    /// counted yet (loaded since the last count) is counted now, or its use would be lost until
    /// a count sees it; one written here was counted by its write.
    /// Returns the entry's use, to note the next time it answers.
    @discardableResult
    func touch(_ entry: CacheEntry) -> Use? {
        let identity = entry.storageIdentity
        let tick = nextTick()
        return state.withLock { state in
            if let use = state.use(of: entry) {
                use.tick.store(tick, ordering: .relaxed)
                return use
            }
            // The ledger gives every entry in memory its partition's use: one it does not know
            // was dropped since it answered.
            guard state.ledger == nil, case .payload(let payload) = entry.members else { return nil }
            let use = Use(tick: tick, bytes: Self.cost(payloadBytes: payload.count), of: entry)
            state.used[identity] = use
            return use
        }
    }

    /// What settling one transaction did.
    struct Settled {
        /// How many entries it evicted.
        var evicted = 0
        /// How many of those were expired access tokens.
        var expired = 0
    }

    /// Accounts the changes `transaction` made to `before` and, when that takes the group past
    /// ``limit``, adds the deletions that bring it back under the target.
    ///
    /// - Parameters:
    ///   - before: the index the transaction started from, caught up with the store.
    ///   - generation: the store generation `before` reflects.
    ///   - now: the time, for expiry.
    func settle(_ transaction: inout IndexTransaction, before: Index, generation: UInt64, now: Int64) -> Settled {
        state.withLock { state in
            // Until the commit says otherwise: a write that fails leaves the count to be redone.
            let counted = state.generation
            state.generation = nil
            let firstTickOfThisWrite = clock.load(ordering: .relaxed) &+ 1
            var written: [EntryID: Int] = [:]
            for case .put(let record) in transaction.changes {
                if let kind = RecordCodec.credentialKind(record.id.kind) {
                    written[EntryID(kind: kind, keyText: record.id.nameText)] = record.payload.count
                }
            }
            var deleted: [EntryID] = []
            for case .delete(let record) in transaction.changes {
                if let kind = RecordCodec.credentialKind(record.kind) {
                    deleted.append(EntryID(kind: kind, keyText: record.nameText))
                }
            }
            /// What an entry of the group is accounted as: known for the entries this group wrote.
            func cost(_ stored: StoredEntry?) -> Int {
                guard let stored else { return 0 }
                return state.use(of: stored.entry)?.bytes ?? Self.cost(stored)
            }
            if counted == generation {
                for id in deleted where written[id] == nil { state.accounted -= cost(before[id]) }
                for (id, bytes) in written { state.accounted += Self.cost(payloadBytes: bytes) - cost(before[id]) }
            }
            for id in deleted + written.keys {
                if let gone = before[id] { state.used[gone.entry.storageIdentity] = nil }
            }
            if counted != generation {
                // Another group on the same store wrote: count everything once.
                state.accounted = transaction.index.entries.values.reduce(0) { $0 + Self.cost($1) }
            }
            for (id, bytes) in written {
                guard let stored = transaction.index[id] else { continue }
                state.used[stored.entry.storageIdentity] = Use(
                    tick: nextTick(), bytes: Self.cost(payloadBytes: bytes), of: stored.entry)
            }
            var settled = Settled()
            guard state.accounted > limit else { return settled }
            let target = Int(Double(limit) * Self.targetFraction)
            for id in transaction.index.expiredAccessTokens(now: now) {
                guard let stored = transaction.index[id] else { continue }
                state.accounted -= cost(stored)
                state.used[stored.entry.storageIdentity] = nil
                transaction.delete(id)
                settled.expired += 1
            }
            settled.evicted = settled.expired
            guard state.accounted > target else { return settled }
            settled.evicted += evictLeastRecentlyUsed(
                from: &transaction, down: target, sparing: firstTickOfThisWrite, state: &state)
            return settled
        }
    }

    /// What one partition of the group holds, for choosing what to evict.
    private struct PartitionUse {
        var lastUsed: UInt64 = 0
        var bytes = 0
        var ids: [EntryID] = []
        /// Its entries' storage, whose uses go with the partition.
        var identities: [ObjectIdentifier] = []
        var users: Set<String> = []

        /// Counts `stored`, whose use is `use`, into the partition.
        mutating func add(_ stored: StoredEntry, identity: ObjectIdentifier, use: Use, holder: GroupEntry.Holder) {
            lastUsed = max(lastUsed, use.tick.load(ordering: .relaxed))
            bytes += use.bytes
            ids.append(stored.id)
            identities.append(identity)
            if holder == .user, let home = stored.entry.homeAccount { users.insert(home) }
        }
    }

    /// The group's partitions with their last use and cost, in one pass over `index`, and what
    /// the entries of no partition cost; forgets the uses of entries that are gone.
    private static func partitions(of index: Index, state: inout State) -> (
        partitions: [CachePartition: PartitionUse], unpartitioned: Int
    ) {
        var partitions: [CachePartition: PartitionUse] = [:]
        var unpartitioned = 0
        var live: [ObjectIdentifier: Use] = [:]
        live.reserveCapacity(state.used.count)
        // Each entry where it is held, not first copied into a list of them all.
        index.entries.forEach { stored in
            guard let partition = CachePartition(of: stored.entry) else {
                unpartitioned += Self.cost(stored)
                return
            }
            let identity = stored.entry.storageIdentity
            // An entry this group wrote is known; one another group wrote is counted now.
            let use = state.use(of: stored.entry) ?? Use(tick: 0, bytes: Self.cost(stored), of: stored.entry)
            live[identity] = use
            // Added where it is filed: a summary copied out and back would copy its arrays once
            // per entry, while the dictionary still holds them.
            partitions[partition, default: PartitionUse()].add(stored, identity: identity, use: use, holder: partition.holder)
        }
        state.used = live
        return (partitions, unpartitioned)
    }

    /// Removes whole partitions, least recently used first, until `state.accounted` is at most
    /// `target` or only partitions used since `sparing` are left; forgets the uses of entries
    /// that are gone. Returns how many entries it removed.
    private func evictLeastRecentlyUsed(
        from transaction: inout IndexTransaction, down target: Int, sparing: UInt64, state: inout State
    ) -> Int {
        var evicted = 0
        let partitions = Self.partitions(of: transaction.index, state: &state).partitions
        for (_, partition) in partitions.sorted(by: { $0.value.lastUsed < $1.value.lastUsed }) {
            guard state.accounted > target, partition.lastUsed < sparing else { break }
            for id in partition.ids { transaction.delete(id) }
            for identity in partition.identities { state.used[identity] = nil }
            // An evicted user is signed out of every client, as a cleared one is.
            for home in partition.users {
                for client in transaction.index.clientStates.keys {
                    transaction.updateClientState(client) { $0.forget(home) }
                }
            }
            state.accounted -= partition.bytes
            evicted += partition.ids.count
        }
        return evicted
    }

    // MARK: Keeping part of a group in memory

    /// Accounts everything `index` holds, in place of what was accounted: for a group that keeps
    /// part of its store, at its open and when its store has it reload.
    func account(_ index: Index) {
        state.withLock { state in
            guard state.ledger != nil else { return }
            state.ledger = PartitionLedger(of: index, tick: nextTick(), uses: &state.used)
            state.accounted = state.ledger!.total
        }
    }

    /// Accounts what `update` (another writer's changes, or partitions loaded) changed, as `index`,
    /// the snapshot it was filed into, holds it. Called with that snapshot installed and the
    /// group's snapshot lock held, so that the ledger follows the snapshots in the order installed.
    func account(_ update: RecordCodec.DecodedUpdate, in index: Index) {
        state.withLock { state in
            guard state.ledger != nil else { return }
            switch update {
            case .unchanged: return
            case .reload:
                state.ledger = PartitionLedger(of: index, tick: nextTick(), uses: &state.used)
            case .changes(let changes):
                let tick = nextTick()
                for change in changes {
                    switch change {
                    case .insert(let stored):
                        state.ledger!.file(stored, bytes: Self.cost(stored), tick: tick, uses: &state.used)
                    case .remove(let id): state.ledger!.remove(id, uses: &state.used)
                    default: continue
                    }
                }
            }
            state.accounted = state.ledger!.total
        }
    }

    /// Accounts the record changes a write made, or caught up with, as `index`, the snapshot it
    /// installed, holds them: `changes`, after `earlier` (those it caught up with); called as
    /// ``account(_:in:)`` is.
    func account(_ earlier: [RecordChange] = [], then changes: [RecordChange], in index: Index) {
        state.withLock { state in
            guard state.ledger != nil else { return }
            let tick = nextTick()
            var seen: Set<EntryID> = []
            // The last change to an entry says what it is accounted as.
            func note(_ change: RecordChange) {
                guard let kind = RecordCodec.credentialKind(change.id.kind) else { return }
                let id = EntryID(kind: kind, keyText: change.id.nameText)
                guard seen.insert(id).inserted else { return }
                if let stored = index[id] {
                    // A record put says what its entry takes, without encoding the entry again.
                    let bytes: Int
                    switch change {
                    case .put(let record): bytes = Self.cost(payloadBytes: record.payload.count)
                    case .delete: bytes = Self.cost(stored)
                    }
                    state.ledger!.file(stored, bytes: bytes, tick: tick, uses: &state.used)
                } else {
                    state.ledger!.remove(id, uses: &state.used)
                }
            }
            // Walked where they are: an array joining them would be made under the lock.
            for change in changes.reversed() { note(change) }
            for change in earlier.reversed() { note(change) }
            state.accounted = state.ledger!.total
        }
    }

    /// Forgets the uses of the entries of `index` that `update` (another writer's changes, or
    /// partitions loaded) replaces or removes; a reload replaces them all. A group that keeps part
    /// of its store accounts the same with ``account(_:in:)`` instead.
    func forget(leaving index: Index, by update: RecordCodec.DecodedUpdate) {
        switch update {
        case .unchanged: return
        case .reload: state.withLock { $0.used = [:] }
        case .changes(let changes):
            var leaving: [ObjectIdentifier] = []
            for change in changes {
                switch change {
                case .insert(let stored): if let old = index[stored.id] { leaving.append(old.entry.storageIdentity) }
                case .remove(let id): if let old = index[id] { leaving.append(old.entry.storageIdentity) }
                default: continue
                }
            }
            guard !leaving.isEmpty else { return }
            state.withLock { state in
                for identity in leaving { state.used[identity] = nil }
            }
        }
    }

    /// Whether the count has passed the limit, so that a plan may drop something.
    var mayExceedLimit: Bool { state.withLock { $0.accounted > limit } }

    /// The partitions to drop from memory, least recently used first, to bring what a group that
    /// keeps part of its store holds under ``dropTargetFraction`` of the limit, sparing the
    /// partitions named in `sparing` (by ``CachePartition/storageKey``); none when it is under the
    /// limit. The ledger forgets them: the caller drops them. Sorts the partitions in memory, and
    /// visits no entry but those of the partitions dropped.
    func plan(sparing: Set<String>) -> (partitions: [CachePartition], ids: [EntryID]) {
        state.withLock { state in
            guard state.ledger != nil, state.accounted > limit else { return ([], []) }
            let target = Int(Double(limit) * Self.dropTargetFraction)
            let order = state.ledger!.held.map { key, held in (key: key, lastUsed: held.use.tick.load(ordering: .relaxed)) }
                .sorted { $0.lastUsed < $1.lastUsed }
            var dropped: [CachePartition] = []
            var ids: [EntryID] = []
            for (key, _) in order {
                guard state.accounted > target else { break }
                if sparing.contains(key) { continue }
                guard let partition = state.ledger!.drop(key, uses: &state.used) else { continue }
                dropped.append(partition.partition)
                ids += partition.ids
                state.accounted = state.ledger!.total
            }
            return (dropped, ids)
        }
    }

    /// Records that the accounting reflects the store at `generation` (the commit that settled).
    func committed(at generation: UInt64) {
        state.withLock { $0.generation = generation }
    }

    /// What the group's entries take now, as counted.
    var accountedBytes: Int { state.withLock { $0.accounted } }

    /// How many entries' uses the bound keeps: no more than the entries the group holds, but for
    /// uses noted after their entry left, which go with the next count of the partitions.
    var trackedUses: Int { state.withLock { $0.used.count } }

    /// What `stored` is accounted as.
    static func cost(_ stored: StoredEntry) -> Int {
        switch stored.entry.members {
        case .payload(let payload): cost(payloadBytes: payload.count)
        case .object: cost(payloadBytes: EntryPayload.encode(stored).count)
        }
    }

}
