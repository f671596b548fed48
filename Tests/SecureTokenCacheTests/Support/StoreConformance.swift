import Foundation
import Synchronization
import Testing

@testable import SecureTokenCache

/// The promises of the ``CacheStore`` seam, checked against any backend: a new backend proves
/// itself by passing every check here (see the conformance suites of the memory, file and keyring
/// stores).
///
/// Each check opens the group under test through ``open``, several times when it needs several
/// readers or writers, as separate processes would each open their own store.
struct StoreConformance: Sendable {
    /// A name for messages.
    let name: String
    /// Opens the group under test (the same group on every call).
    let open: @Sendable () throws -> any CacheStore
    /// Opens the same group with another key; `nil` for a backend without keys.
    let openWithAnotherKey: (@Sendable () throws -> any CacheStore)?

    /// Payloads by record name, after applying `update` to `content`.
    static func apply(_ update: StoreUpdate, to content: inout [String: String]) {
        switch update {
        case .unchanged: break
        case .reload(let records, _):
            content = Dictionary(uniqueKeysWithValues: records.map { ($0.id.name, String(decoding: $0.payload, as: UTF8.self)) })
        case .changes(let changes, _):
            for change in changes {
                switch change {
                case .put(let record): content[record.id.name] = String(decoding: record.payload, as: UTF8.self)
                case .delete(let id): content[id.name] = nil
                }
            }
        }
    }

    static func put(_ name: String, _ payload: String) -> RecordChange {
        .put(Record(id: RecordID(kind: .accessToken, name: name), payload: Array(payload.utf8)))
    }

    /// A new group is empty at generation 0, and a reader at its cursor is up to date.
    func aNewGroupIsEmpty() throws {
        let store = try open()
        let (records, cursor) = try store.load()
        #expect(records.isEmpty, "\(name)")
        #expect(cursor.generation == 0 && store.currentGeneration() == 0, "\(name)")
        guard case .unchanged = try store.update(since: cursor) else {
            Issue.record("\(name): a reader at the current cursor must be told nothing changed")
            return
        }
    }

    /// A commit is one transaction at the next generation, seen whole by another reader, which
    /// then is up to date.
    func aCommitIsSeenWholeAtTheNextGeneration() throws {
        let writer = try open()
        let reader = try open()
        var (_, readerCursor) = try reader.load()
        let before = writer.currentGeneration()
        let after = try writer.transact(since: try writer.load().1) { _ in
            [Self.put("a", "1"), Self.put("b", "2"), Self.put("c", "3")]
        }
        #expect(after.generation == before + 1 && writer.currentGeneration() == before + 1, "\(name)")
        #expect(reader.currentGeneration() == before + 1, "\(name): the generation is shared")
        var content: [String: String] = [:]
        let update = try reader.update(since: readerCursor)
        Self.apply(update, to: &content)
        #expect(content == ["a": "1", "b": "2", "c": "3"], "\(name)")
        readerCursor = update.cursor
        guard case .unchanged = try reader.update(since: readerCursor) else {
            Issue.record("\(name): a reader that caught up must be told nothing changed")
            return
        }
        _ = try writer.transact(since: after) { _ in [.delete(RecordID(kind: .accessToken, name: "b"))] }
        Self.apply(try reader.update(since: readerCursor), to: &content)
        #expect(content == ["a": "1", "c": "3"], "\(name)")
        // And a store opened now loads the same.
        let (records, cursor) = try open().load()
        #expect(Set(records.map(\.id.name)) == ["a", "c"] && cursor.generation == before + 2, "\(name)")
    }

    /// A body that throws, or returns no change, writes nothing and leaves the generation alone.
    func aFailedOrEmptyTransactionWritesNothing() throws {
        struct Refused: Error {}
        let store = try open()
        let start = try store.transact(since: try store.load().1) { _ in [Self.put("kept", "1")] }
        #expect(throws: Refused.self) { try store.transact(since: start) { _ in throw Refused() } }
        _ = try store.transact(since: start) { _ in [] }
        #expect(store.currentGeneration() == start.generation, "\(name)")
        let (records, _) = try open().load()
        #expect(records.map(\.id.name) == ["kept"], "\(name)")
    }

    /// Writers in several stores and threads at once, each from a stale cursor, never lose a
    /// write: the body always sees what it missed.
    func concurrentWritersLoseNothing(stores: Int = 2, threadsPerStore: Int = 2, writesPerThread: Int = 10) throws {
        let opened = try (0..<stores).map { _ in try open() }
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: stores * threadsPerStore) { worker in
            let store = opened[worker % stores]
            for write in 0..<writesPerThread {
                do {
                    _ = try store.transact(since: .start) { transaction in
                        if case .unchanged = transaction.update, store.currentGeneration() > 0 {
                            throw TokenCacheError(.invalidArgument, "a stale writer was told nothing changed")
                        }
                        return [Self.put("w\(worker)-\(write)", "\(write)")]
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(name): \(failures.withLock { $0 })")
        let (records, cursor) = try open().load()
        #expect(records.count == stores * threadsPerStore * writesPerThread, "\(name)")
        #expect(cursor.generation == UInt64(stores * threadsPerStore * writesPerThread), "\(name)")
    }

    /// A commit through another store, made after the stream was asked for, is followed by a
    /// change event.
    func aCommitIsFollowedByAChangeEvent() async throws {
        let watcher = try open()
        let writer = try open()
        let events = try watcher.changes()
        let committed = try writer.transact(since: try writer.load().1) { _ in [Self.put("event", "1")] }
        // The generation the watcher sees when the event arrives: the event must come after the
        // commit is published, or a listener could compare, find nothing new, and miss it.
        let seen = await withTaskGroup(of: UInt64?.self) { group in
            group.addTask {
                for await _ in events { return watcher.currentGeneration() }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        #expect(seen != nil, "\(name): no change event within 10 s of a commit")
        #expect((seen ?? 0) >= committed.generation, "\(name): the event came before the generation moved")
    }

    /// Another key opens nothing: a typed error, never an empty group.
    func anotherKeyIsATypedError() throws {
        guard let openWithAnotherKey else { return }
        let store = try open()
        _ = try store.transact(since: try store.load().1) { _ in [Self.put("sealed", "secret")] }
        let error = #expect(throws: TokenCacheError.self, "\(name)") {
            let other = try openWithAnotherKey()
            _ = try other.load()
        }
        #expect(error?.code == .wrongKey || error?.code == .storeCorrupted, "\(name): \(String(describing: error))")
    }
}
