import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

@Suite(.serialized, .tags(.multiProcess), .timeLimit(.minutes(5))) struct FileStoreMultiProcessTests {
    @Test func fourProcessesWriteConcurrentlyAndNothingIsLostOrDuplicated() async throws {
        let tmp = TemporaryDirectory()
        let reader = try FileStore(group: "shared", keyProvider: helperPassphrase, root: tmp.path)
        var (records, cursor) = try reader.load()
        var snapshot = contents(records)
        var putsSeen: [String: Int] = [:]
        let helpers = try (0..<4).map { try Helper(["write", tmp.path, "shared", "p\($0)", "250"]) }
        // Follow the writers incrementally while they run: a view built from tails only.
        let done = Task.detached { helpers.map { $0.finish() } }
        var finished = false
        while !finished {
            let update = try reader.update(since: cursor)
            if case .changes(let changes, _) = update {
                for case .put(let record) in changes { putsSeen[record.id.name, default: 0] += 1 }
            }
            apply(update, to: &snapshot)
            cursor = update.cursor
            finished = helpers.allSatisfy { !$0.process.isRunning }
            await Task.yield()
        }
        let outputs = await done.value
        let final = try reader.update(since: cursor)
        if case .changes(let changes, _) = final {
            for case .put(let record) in changes { putsSeen[record.id.name, default: 0] += 1 }
        }
        apply(final, to: &snapshot)

        for (index, lines) in outputs.enumerated() {
            #expect(lines.filter { $0.hasPrefix("ack ") }.count == 250, "writer \(index)")
            #expect(lines.last?.hasPrefix("verified") == true, "writer \(index): \(lines.last ?? "")")
        }
        let expected = Dictionary(
            uniqueKeysWithValues: (0..<4).flatMap { p in (0..<250).map { ("1:p\(p)-\($0)", "p\(p)-\($0)") } })
        #expect(snapshot == expected)
        #expect(contents(try reader.load().0) == expected)
        let fresh = try FileStore(group: "shared", keyProvider: helperPassphrase, root: tmp.path)
        #expect(contents(try fresh.load().0) == expected)
        #expect(putsSeen.count == 1000 && putsSeen.values.allSatisfy { $0 == 1 }, "no write applied twice")
        // And in four more processes' views.
        let counts = try (0..<4).map { _ in try Helper(["count", tmp.path, "shared"]) }.map { $0.finish() }
        #expect(counts.allSatisfy { $0 == ["count 1000"] }, "\(counts)")
    }

    @Test func concurrentWritersCompactingWhileAReaderFollows() async throws {
        let tmp = TemporaryDirectory()
        let reader = try FileStore(group: "hot", keyProvider: helperPassphrase, root: tmp.path)
        var (records, cursor) = try reader.load()
        var snapshot = contents(records)
        let helpers = try (0..<3).map { try Helper(["overwrite", tmp.path, "hot", "w\($0)", "150"]) }
        let done = Task.detached { helpers.map { $0.finish() } }
        var reloads = 0
        while helpers.contains(where: { $0.process.isRunning }) {
            let update = try reader.update(since: cursor)
            if case .reload = update { reloads += 1 }
            apply(update, to: &snapshot)
            cursor = update.cursor
            await Task.yield()
        }
        let outputs = await done.value
        #expect(outputs.allSatisfy { $0 == ["done 150"] }, "\(outputs)")
        let final = try reader.update(since: cursor)
        apply(final, to: &snapshot)
        var expected: [String: String] = [:]
        for writer in 0..<3 { for slot in 0..<5 { expected["1:w\(writer)-\(slot)"] = "\(145 + slot)" } }
        #expect(snapshot == expected)
        records = try FileStore(group: "hot", keyProvider: helperPassphrase, root: tmp.path).load().0
        #expect(contents(records) == expected)
        #expect(cursor.epoch > 1 || final.cursor.epoch > 1, "the group compacted")
        #expect(readBytes(tmp.path + "/hot/log").count < 200 * 450, "compaction kept the log short")
    }

    @Test func processesRacingToCreateAGroupAllEndUpInOne() throws {
        let tmp = TemporaryDirectory()
        let helpers = try (0..<4).map { try Helper(["write", tmp.path, "new", "c\($0)", "5"]) }
        let outputs = helpers.map { $0.finish() }
        #expect(outputs.allSatisfy { $0.last == "verified 5" || $0.last?.hasPrefix("verified") == true }, "\(outputs)")
        let store = try FileStore(group: "new", keyProvider: helperPassphrase, root: tmp.path)
        #expect(try store.load().0.count == 20)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: tmp.path).filter { $0 != "new" }
        #expect(leftovers.isEmpty, "half-made group directories left behind: \(leftovers)")
    }

    /// The group after the churn helper's transaction n: `counter` = n and `live-j` for the last
    /// five j.
    static func churnState(_ n: Int) -> [String: String] {
        var state: [String: String] = [:]
        if n > 0 { state["5:counter"] = "\(n)" }
        for j in max(1, n - 4)...max(1, n) where n > 0 { state["1:live-\(j)"] = "v\(j)" }
        return state
    }

    static func churnCount(_ snapshot: [String: String]) -> Int? {
        let n = snapshot["5:counter"].flatMap { Int($0) } ?? 0
        return snapshot == churnState(n) ? n : nil
    }

    @Test(.tags(.slow)) func writerKilledAtRandomPointsNeverLosesAcknowledgedTransactions() throws {
        let tmp = TemporaryDirectory()
        let reader = try FileStore(group: "churn", keyProvider: helperPassphrase, root: tmp.path)
        var (records, cursor) = try reader.load()
        var snapshot = contents(records)
        var acknowledged = 0
        var generator = SystemRandomNumberGenerator()
        // STC_KILL_ROUNDS raises the count for soak runs.
        let rounds = ProcessInfo.processInfo.environment["STC_KILL_ROUNDS"].flatMap { Int($0) } ?? 200
        for round in 0..<rounds {
            let before = reader.currentGeneration()
            let helper = try Helper(["churn", tmp.path, "churn"])
            // The kill window opens once the writer commits (process start-up on a loaded machine
            // can take longer than the window), so every round kills a writer mid-stream.
            let started = Date().addingTimeInterval(5)
            while reader.currentGeneration() == before, Date() < started { usleep(200) }
            let deadline = Date().addingTimeInterval(Double.random(in: 0.0...0.06, using: &generator))
            // Read while the writer runs: every view must be the state after some whole transaction.
            repeat {
                let update = try reader.update(since: cursor)
                apply(update, to: &snapshot)
                cursor = update.cursor
                let n = try #require(Self.churnCount(snapshot), "round \(round): partial transaction visible: \(snapshot)")
                #expect(n >= acknowledged)
            } while Date() < deadline
            helper.kill()
            let lines = helper.finish()
            if let error = lines.first(where: { $0.hasPrefix("error") || $0.hasPrefix("fatal") }) {
                Issue.record("round \(round): helper failed: \(error)")
                return
            }
            let acked = lines.compactMap { $0.hasPrefix("ack ") ? Int($0.dropFirst(4)) : nil }.max() ?? 0
            // After the kill the group opens, is the state after some whole transaction, holds every
            // acknowledged transaction and never less than any reader saw before. It may hold more:
            // a writer killed after its append reached the page cache (typically inside fsync) but
            // before it published leaves a complete transaction that the next writer adopts.
            let fresh = try FileStore(group: "churn", keyProvider: helperPassphrase, root: tmp.path)
            let n = try #require(
                Self.churnCount(contents(try fresh.load().0)), "round \(round): group is not a whole-transaction state")
            #expect(
                n >= max(acked, acknowledged), "round \(round): holds \(n), acknowledged \(acked), seen before \(acknowledged)")
            acknowledged = n
        }
        #expect(acknowledged > 100, "the writer got some work done")
        #expect(!FileManager.default.fileExists(atPath: tmp.path + "/churn/quarantine"))
    }

    @Test func readerSeesAnotherProcesssWriteOnItsNextUpdate() throws {
        let tmp = TemporaryDirectory()
        let reader = try FileStore(group: "fresh", keyProvider: helperPassphrase, root: tmp.path)
        var (_, cursor) = try reader.load()
        for round in 0..<5 {
            let generation = reader.currentGeneration()
            let lines = try Helper(["write", tmp.path, "fresh", "r\(round)", "1"]).finish()
            #expect(lines.first == "ack 0")
            // No sleep: the write is visible as soon as the other process acknowledged it.
            #expect(reader.currentGeneration() != generation)
            let update = try reader.update(since: cursor)
            guard case .changes(let changes, let next) = update else {
                Issue.record("expected the other process's write, got \(update)")
                return
            }
            #expect(changes.map(\.id.name) == ["r\(round)-0"])
            cursor = next
        }
    }

    @Test func changeStreamFiresWhenAnotherProcessCommits() async throws {
        let tmp = TemporaryDirectory()
        let store = try FileStore(group: "watched", keyProvider: helperPassphrase, root: tmp.path)
        let stream = try store.changes()
        let generation = store.currentGeneration()
        let helper = try Helper(["write", tmp.path, "watched", "w", "1"])
        // Wait for the first event, but never hang the suite: give up after 10 s.
        let fired = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in stream { return true }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        #expect(fired)
        _ = helper.finish()
        #expect(store.currentGeneration() != generation)
    }
}
