import Synchronization

/// A group held in process memory: for tests and short-lived tools. Every `CacheGroup` of one
/// process that shares a `MemoryStore` sees the others' writes, as processes do with the
/// durable stores.
final class MemoryStore: CacheStore {
    private struct State {
        var records: [RecordID: Record] = [:]
        /// Every committed transaction, in order; index `i` holds the changes of generation `i + 1`.
        var history: [[RecordChange]] = []
    }

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
            (Array(state.records.values), StoreCursor(generation: UInt64(state.history.count), epoch: 0, position: 0))
        }
    }

    func update(since cursor: StoreCursor) throws -> StoreUpdate {
        state.withLock { state in Self.update(of: state, since: cursor) }
    }

    private static func update(of state: State, since cursor: StoreCursor) -> StoreUpdate {
        let current = StoreCursor(generation: UInt64(state.history.count), epoch: 0, position: 0)
        guard cursor.generation < current.generation else { return .unchanged(current) }
        return .changes(Array(state.history[Int(cursor.generation)...].joined()), current)
    }

    func transact(since cursor: StoreCursor, _ body: (StoreTransaction) throws -> [RecordChange]) throws -> StoreCursor {
        try state.withLock { state in
            let changes = try body(StoreTransaction(update: Self.update(of: state, since: cursor), compacting: false))
            guard !changes.isEmpty else {
                return StoreCursor(generation: UInt64(state.history.count), epoch: 0, position: 0)
            }
            for change in changes {
                switch change {
                case .put(let record): state.records[record.id] = record
                case .delete(let id): state.records[id] = nil
                }
            }
            state.history.append(changes)
            let next = UInt64(state.history.count)
            generation.store(next, ordering: .releasing)
            listeners.yieldToAll()
            return StoreCursor(generation: next, epoch: 0, position: 0)
        }
    }
}
