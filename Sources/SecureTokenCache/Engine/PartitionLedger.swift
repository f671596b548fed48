/// What each partition in memory holds and costs, for a bounded group whose store keeps only part
/// of it (``PartialStore``): kept up to date by every snapshot the group installs (a partition
/// loaded, another instance's commit caught up with, a write, a drop), so that choosing what to
/// drop from memory sorts the partitions, and never walks every entry the group holds while the
/// request whose load took it past its limit waits.
///
/// Filing is idempotent (an entry filed again with the same storage changes nothing), so that a
/// write's snapshot may file changes a catch-up already filed.
struct PartitionLedger {
    /// One partition in memory. A class: choosing what to drop reads every partition's last use,
    /// and a copy of a value would retain and release each of its references (the partition's
    /// key, its use, its set of ids) for every partition read.
    final class Held {
        let partition: CachePartition
        /// Its use, which its entries share: an answer from any of them notes it
        /// (``CacheBound/touch(_:)`` finds it by the entry's storage).
        let use: CacheBound.Use
        /// Its entries.
        var ids: Set<EntryID> = []
        /// What they are accounted as.
        var bytes = 0

        /// `partition`, new to memory, counted as used at `tick`.
        init(partition: CachePartition, tick: UInt64) {
            self.partition = partition
            // The entries' own costs are the ledger's: the shared use counts none.
            use = CacheBound.Use(tick: tick, bytes: 0)
        }
    }

    /// An entry in memory.
    private struct Member {
        /// Its storage, which every copy of the entry shares.
        let identity: ObjectIdentifier
        /// What it is accounted as.
        let bytes: Int
        /// Its partition's ``CachePartition/storageKey``; `nil` for app metadata, which belongs to
        /// none and is never dropped.
        let partition: String?
    }

    /// The partitions in memory, by ``CachePartition/storageKey``.
    private(set) var held: [String: Held] = [:]
    /// Every entry in memory, by id.
    private var members: [EntryID: Member] = [:]
    /// What every entry in memory is accounted as.
    private(set) var total = 0

    /// Files `stored`, accounted as `bytes`, in place of what was filed under its id; a partition
    /// new to memory counts as used at `tick`. `uses` maps each entry's storage to its partition's
    /// use.
    mutating func file(_ stored: StoredEntry, bytes: Int, tick: UInt64, uses: inout [ObjectIdentifier: CacheBound.Use]) {
        let identity = stored.entry.storageIdentity
        if let filed = members[stored.id] {
            if filed.identity == identity { return }
            remove(stored.id, uses: &uses)
        }
        let partition = CachePartition(of: stored.entry)
        let key = partition?.storageKey
        members[stored.id] = Member(identity: identity, bytes: bytes, partition: key)
        total += bytes
        guard let partition, let key else { return }
        let holder: Held
        if let known = held[key] {
            holder = known
        } else {
            holder = Held(partition: partition, tick: tick)
            held[key] = holder
        }
        holder.ids.insert(stored.id)
        holder.bytes += bytes
        uses[identity] = holder.use
    }

    /// Forgets the entry filed under `id`, if any.
    mutating func remove(_ id: EntryID, uses: inout [ObjectIdentifier: CacheBound.Use]) {
        guard let filed = members.removeValue(forKey: id) else { return }
        total -= filed.bytes
        uses[filed.identity] = nil
        guard let key = filed.partition, let holder = held[key] else { return }
        holder.ids.remove(id)
        holder.bytes -= filed.bytes
        // A partition whose last entry went is gone (``CachePartition``).
        if holder.ids.isEmpty { held[key] = nil }
    }

    /// Forgets a whole partition; returns what it held.
    mutating func drop(_ key: String, uses: inout [ObjectIdentifier: CacheBound.Use]) -> Held? {
        guard let partition = held.removeValue(forKey: key) else { return nil }
        for id in partition.ids {
            guard let filed = members.removeValue(forKey: id) else { continue }
            total -= filed.bytes
            uses[filed.identity] = nil
        }
        return partition
    }

    /// Everything `index` holds, in place of what was filed.
    init(of index: Index, tick: UInt64, uses: inout [ObjectIdentifier: CacheBound.Use]) {
        uses = [:]
        index.entries.forEach { stored in file(stored, bytes: CacheBound.cost(stored), tick: tick, uses: &uses) }
    }

    /// An empty ledger.
    init() {}
}
