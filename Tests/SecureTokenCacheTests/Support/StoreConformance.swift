import Foundation
import Synchronization
import Testing

@testable import SecureTokenCache

/// The promises of the ``CacheStore`` seam, checked against any backend: a new backend proves
/// itself by passing every check here (see the conformance suites of the memory, file and keyring
/// stores).
///
/// Each check opens the group under test through ``open``, several times when it needs several
/// readers or writers, as separate processes would each open their own store. The process checks
/// (a writer killed mid-commit, two writing processes) run the group in real separate processes
/// (`stc-testhelper`, see ``Processes``); they are for every backend a process can share and a
/// crash can interrupt, which leaves out only the memory store: it lives inside one process.
struct StoreConformance: Sendable {
    /// A name for messages.
    let name: String
    /// Opens the group under test (the same group on every call).
    let open: @Sendable () throws -> any CacheStore
    /// Opens the same group with another key; `nil` for a backend without keys.
    let openWithAnotherKey: (@Sendable () throws -> any CacheStore)?
    /// How another process opens the group; `nil` for the memory store.
    var processes: Processes? = nil

    /// How an `stc-testhelper` process opens the group under test: the store it names, the root
    /// and the group's name (with the key the helper uses, ``helperPassphrase`` for a file group).
    struct Processes: Sendable {
        /// The helper's `--store` (`file` or `keyring`).
        var store: String
        /// The root the group is under.
        var root: String
        /// The group's name.
        var group: String

        /// Starts a helper running `command` on the group, with `arguments` after the group.
        func start(_ command: String, _ arguments: [String] = []) throws -> Helper {
            try Helper(["--store", store, command, root, group] + arguments)
        }
    }

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

    /// Payloads by record name.
    static func contents(_ records: [Record]) -> [String: String] {
        var content: [String: String] = [:]
        apply(.reload(records, .start), to: &content)
        return content
    }

    /// How many transactions of the helper's `churn` command `content` is the state after (its
    /// transaction n puts `counter` = n and `live-n`, and deletes `live-(n-5)`), or `nil` if it is
    /// not the state after any whole number of them.
    static func churnCount(_ content: [String: String]) -> Int? {
        let n = content["counter"].flatMap { Int($0) } ?? 0
        var expected: [String: String] = n > 0 ? ["counter": "\(n)"] : [:]
        for j in max(1, n - 4)...max(1, n) where n > 0 { expected["live-\(j)"] = "v\(j)" }
        return content == expected ? n : nil
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

    // MARK: Separate processes

    /// A writer process killed with SIGKILL in the middle of its commits, `rounds` times: every
    /// view a reader gets meanwhile is the state after a whole transaction; afterwards the group
    /// opens holding every transaction the writer acknowledged (and perhaps the one it was
    /// committing), whole; and the group's lock is free, so the next writer gets in.
    func aWriterKilledMidCommitLosesNoAcknowledgedTransaction(rounds: Int) throws {
        let processes = try #require(processes, "\(name): no process access; the memory store is exempt")
        let reader = try open()
        var (records, cursor) = try reader.load()
        var content = Self.contents(records)
        var seen = 0
        for round in 0..<rounds {
            let before = reader.currentGeneration()
            let writer = try processes.start("churn")
            // The kill comes once the writer is committing (starting a process on a loaded machine
            // can take longer than the kill window), at a random moment in its stream of commits.
            let started = ContinuousClock.now
            while reader.currentGeneration() < before + 2, ContinuousClock.now - started < .seconds(30) {
                SystemCall.sleep(for: .microseconds(200))
            }
            let killAt = ContinuousClock.now + .microseconds(Int.random(in: 0...40_000))
            repeat {
                let update = try reader.update(since: cursor)
                Self.apply(update, to: &content)
                cursor = update.cursor
                let n = try #require(Self.churnCount(content), "\(name), round \(round): a partial transaction is visible")
                #expect(n >= seen, "\(name), round \(round)")
            } while ContinuousClock.now < killAt
            writer.kill()
            let lines = writer.finish()
            if let error = lines.first(where: { $0.hasPrefix("error") || $0.hasPrefix("fatal") }) {
                Issue.record("\(name), round \(round): the writer failed: \(error)")
                return
            }
            let acknowledged = lines.compactMap { $0.hasPrefix("ack ") ? Int($0.dropFirst(4)) : nil }.max() ?? 0
            let fresh = try open()
            let (after, freshCursor) = try fresh.load()
            let n = try #require(
                Self.churnCount(Self.contents(after)),
                "\(name), round \(round): the group is not the state after whole transactions")
            #expect(
                n >= max(acknowledged, seen), "\(name), round \(round): holds \(n), acknowledged \(acknowledged), seen \(seen)")
            seen = n
            // The killed writer's lock is free: this write waits for it no longer than the store's
            // lock timeout, and fails if it is still held. It puts the counter as it is, so the group
            // stays the state after n transactions.
            _ = try fresh.transact(since: freshCursor) { _ in
                [.put(Record(id: RecordID(kind: .appMetadata, name: "counter"), payload: Array("\(n)".utf8)))]
            }
        }
        #expect(seen >= rounds, "\(name): the writers committed between the kills")
    }

    /// Two processes writing `writesPerProcess` transactions each to the group at once: each
    /// sees its own writes, and afterwards the group holds every write of both.
    func twoProcessesWritingAtOnceLoseNothing(writesPerProcess: Int) throws {
        let processes = try #require(processes, "\(name): no process access; the memory store is exempt")
        let writers = try ["first", "second"].map { try processes.start("write", [$0, "\(writesPerProcess)"]) }
        let outputs = writers.map { $0.finish() }
        for (writer, lines) in zip(["first", "second"], outputs) {
            #expect(lines.filter { $0.hasPrefix("ack ") }.count == writesPerProcess, "\(name), \(writer): \(lines.suffix(3))")
            #expect(lines.last?.hasPrefix("verified") == true, "\(name), \(writer): \(lines.last ?? "no output")")
        }
        let names = Set(try open().load().0.map(\.id.name))
        let expected = Set(["first", "second"].flatMap { writer in (0..<writesPerProcess).map { "\(writer)-\($0)" } })
        #expect(names == expected, "\(name): missing \(expected.subtracting(names).sorted().prefix(5))")
    }
}
