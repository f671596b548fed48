import Synchronization

/// A group held in process memory: for tests and short-lived tools. Every `CacheGroup` of one
/// process that shares a `MemoryStore` sees the others' writes, as processes do with the
/// durable stores.
final class MemoryStore: CacheStore {
    private struct State {
        /// The records as of generation ``recordsGeneration``. The transactions of ``history``
        /// after it are folded in when something needs every record (a load, a reader too far
        /// behind, dropping history), not at each commit: an import of a whole group is then one
        /// append, and the records of a group nobody reloads are held once, in the history.
        var records: [HashedID: Record] = [:]
        /// The generation ``records`` is at: at least ``historyBase``, at most ``generation``.
        var recordsGeneration: UInt64 = 0
        /// The latest committed transactions, in order; index `i` holds the changes of generation
        /// `historyBase + i + 1`. Older ones are dropped (a server commits for ever): a reader
        /// further behind reloads.
        var history: [[RecordChange]] = []
        /// The generation before the oldest transaction kept.
        var historyBase: UInt64 = 0
        /// The group's generation.
        var generation: UInt64 { historyBase + UInt64(history.count) }

        /// Every record of the group now.
        mutating func currentRecords() -> [Record] {
            foldHistory()
            return Array(records.values)
        }

        /// Brings ``records`` up to ``generation``.
        mutating func foldHistory() {
            let pending = history[Int(recordsGeneration - historyBase)...]
            guard !pending.isEmpty else { return }
            records.reserveCapacity(records.count + pending.reduce(0) { $0 + $1.count })
            for changes in pending {
                for change in changes {
                    switch change {
                    case .put(let record): records[HashedID(record.id)] = record
                    case .delete(let id): records[HashedID(id)] = nil
                    }
                }
            }
            recordsGeneration = generation
        }
    }

    /// A record's id with its hash, made once: an id whose name is held as its payload
    /// (``KeyText``) makes the name to hash it, and the dictionary hashes its keys again as it
    /// grows and as a removal moves its neighbours.
    private struct HashedID: PrehashedKey {
        let id: RecordID
        let prehash: Int

        init(_ id: RecordID) {
            self.id = id
            prehash = id.hashValue
        }

        func hash(into hasher: inout Hasher) { hasher.combine(prehash) }

        static func == (lhs: HashedID, rhs: HashedID) -> Bool { lhs.prehash == rhs.prehash && lhs.id == rhs.id }
    }

    /// How many transactions are kept for readers to replay.
    static let historyLimit = 256

    private let state = Mutex(State())
    private let generation = Atomic<UInt64>(0)
    private let listeners = ChangeListeners()

    let storeDescription: StoreDescription
    /// None: only this process sees the group.
    var groupDirectory: GroupDirectory? { nil }

    init(name: String) {
        storeDescription = StoreDescription(
            kind: .memory,
            location: "memory:\(name)",
            protection: .memoryOnly,
            reason: "an in-memory store was requested"
        )
    }

    func currentGeneration() -> UInt64 { generation.load(ordering: .acquiring) }

    /// One element after each commit through this store (only this process sees it).
    func changes() throws -> AsyncStream<Void> { listeners.stream() }

    func load() throws -> ([Record], StoreCursor) {
        state.withLock { state in
            (state.currentRecords(), StoreCursor(generation: state.generation, epoch: 0, position: 0))
        }
    }

    func update(since cursor: StoreCursor) throws -> StoreUpdate {
        state.withLock { state in Self.update(of: &state, since: cursor) }
    }

    private static func update(of state: inout State, since cursor: StoreCursor) -> StoreUpdate {
        let current = StoreCursor(generation: state.generation, epoch: 0, position: 0)
        guard cursor.generation < current.generation else { return .unchanged(current) }
        guard cursor.generation >= state.historyBase else { return .reload(state.currentRecords(), current) }
        return .changes(Array(state.history[Int(cursor.generation - state.historyBase)...].joined()), current)
    }

    func transact(since cursor: StoreCursor, _ body: (StoreTransaction) throws -> [RecordChange]) throws -> StoreCursor {
        try state.withLock { state in
            let changes = try body(StoreTransaction(update: Self.update(of: &state, since: cursor), compacting: false))
            guard !changes.isEmpty else {
                return StoreCursor(generation: state.generation, epoch: 0, position: 0)
            }
            state.history.append(changes)
            if state.history.count > Self.historyLimit {
                state.foldHistory()
                let dropped = state.history.count - Self.historyLimit / 2
                state.history.removeFirst(dropped)
                state.historyBase += UInt64(dropped)
            }
            let next = state.generation
            generation.store(next, ordering: .releasing)
            listeners.yieldToAll()
            return StoreCursor(generation: next, epoch: 0, position: 0)
        }
    }
}
