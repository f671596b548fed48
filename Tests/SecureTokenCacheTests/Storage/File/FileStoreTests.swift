import Foundation
import Testing

@testable import SecureTokenCache

@Suite(.timeLimit(.minutes(1))) struct FileStoreTests {
    @Test func createTransactLoadAndReopen() throws {
        let tmp = TemporaryDirectory()
        let store = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        #expect(store.storeDescription.kind == .file)
        #expect(store.storeDescription.protection == .passphrase)
        let (empty, start) = try store.load()
        #expect(empty.isEmpty)
        let generation = store.currentGeneration()
        let cursor = try store.transact(since: start) { txn in
            guard case .unchanged = txn.update else { Issue.record("expected no changes"); return [] }
            return [put("a", "1"), put("b", "2", kind: .refreshToken), put("c", "3")]
        }
        #expect(store.currentGeneration() == generation + 1)
        #expect(cursor.generation == generation + 1)
        try store.commit([delete("c"), put("a", "1b")], since: cursor)
        #expect(contents(try store.load().0) == ["1:a": "1b", "2:b": "2"])

        let reopened = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        #expect(contents(try reopened.load().0) == ["1:a": "1b", "2:b": "2"])
        var info = stat()
        #expect(lstat(tmp.path + "/g", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        for file in ["header", "log", "state", "lock"] {
            #expect(lstat(tmp.path + "/g/" + file, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o600, "\(file)")
        }
    }

    @Test func updateReturnsOnlyTheNewTail() throws {
        let tmp = TemporaryDirectory()
        let writer = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        let reader = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        try writer.commit((0..<10).map { put("r\($0)", "v\($0)") })
        var (records, cursor) = try reader.load()
        var snapshot = contents(records)
        #expect(snapshot.count == 10)
        if case .unchanged = try reader.update(since: cursor) {} else { Issue.record("expected unchanged") }

        try writer.commit([put("r3", "new"), delete("r4")])
        #expect(reader.currentGeneration() != cursor.generation)
        let update = try reader.update(since: cursor)
        guard case .changes(let changes, let next) = update else { Issue.record("expected changes, got \(update)"); return }
        #expect(changes.count == 2)
        apply(update, to: &snapshot)
        cursor = next
        #expect(snapshot["1:r3"] == "new" && snapshot["1:r4"] == nil)
        #expect(cursor.generation == reader.currentGeneration())
        records = try reader.load().0
        #expect(contents(records) == snapshot)
    }

    /// Under `relatime` (this machine's and most distributions' default) the first read after
    /// a write would stamp the log's access time, an inode write inside every catch-up.
    @Test func readingTheLogLeavesItsAccessTimeAlone() throws {
        let tmp = TemporaryDirectory()
        let writer = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        let reader = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        let cursor = try reader.load().1
        try writer.commit([put("a", "1")])
        // An access time older than the modification time: the state relatime updates on read.
        let log = tmp.path + "/g/log"
        var info = stat()
        #expect(stat(log, &info) == 0)
        var times = [timespec(tv_sec: 1_000_000, tv_nsec: 0), info.st_mtim]
        #expect(utimensat(AT_FDCWD, log, &times, 0) == 0)

        guard case .changes(let changes, _) = try reader.update(since: cursor) else {
            Issue.record("expected the writer's change")
            return
        }
        #expect(changes.count == 1)
        #expect(contents(try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path).load().0) == ["1:a": "1"])
        #expect(stat(log, &info) == 0)
        #expect(info.st_atim.tv_sec == 1_000_000)
    }

    @Test func cursorsThatAreNotTransactionBoundariesReload() throws {
        let tmp = TemporaryDirectory()
        let store = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        let cursor = try store.commit([put("a", "1"), put("b", "2")])
        try store.commit([put("c", "3")], since: cursor)
        for position in [0, 1, 31, 33, 40, 96, 97, cursor.position - 1, cursor.position + 1, UInt64.max] {
            let bogus = StoreCursor(generation: 0, epoch: cursor.epoch, position: position)
            guard case .reload(let records, _) = try store.update(since: bogus) else {
                Issue.record("position \(position): expected a reload")
                continue
            }
            #expect(contents(records).count == 3)
            let seen = try store.transact(since: bogus) { txn in
                if case .reload(let records, _) = txn.update {
                    #expect(contents(records).count == 3)
                } else {
                    Issue.record("position \(position): expected a reload in the transaction")
                }
                return []
            }
            #expect(seen.position > cursor.position)
        }
        #expect(!FileManager.default.fileExists(atPath: tmp.path + "/g/quarantine"))
    }

    @Test func transactionBodySeesOthersChangesAndEmptyBodyWritesNothing() throws {
        let tmp = TemporaryDirectory()
        let a = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        let b = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        let cursorA = try a.commit([put("x", "1")])
        let cursorB = try b.commit([put("y", "2")], since: try b.load().1)
        var seen: [String: String] = ["1:x": "1"]
        let generation = a.currentGeneration()
        let size = readBytes(tmp.path + "/g/log").count
        let after = try a.transact(since: cursorA) { txn in
            apply(txn.update, to: &seen)
            return []
        }
        #expect(seen == ["1:x": "1", "1:y": "2"])
        #expect(after.position == cursorB.position)
        #expect(a.currentGeneration() == generation)
        #expect(readBytes(tmp.path + "/g/log").count == size)
        // A body that throws writes nothing.
        struct Stop: Error {}
        #expect(throws: Stop.self) { try a.transact(since: after) { _ in throw Stop() } }
        #expect(readBytes(tmp.path + "/g/log").count == size)
    }

    @Test func compactionKeepsLiveRecordsAndMakesReadersReload() throws {
        let tmp = TemporaryDirectory()
        let store = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path, compactionMinimumDead: 8)
        let reader = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        var cursor = try store.commit([put("keep", "k"), put("expired", "e")])
        let (_, readerCursor) = try reader.load()
        var sawCompacting = false
        for round in 0..<20 {
            cursor = try store.transact(since: cursor) { txn in
                if txn.compacting {
                    sawCompacting = true
                    return [put("hot", "\(round)"), delete("expired")]
                }
                return [put("hot", "\(round)")]
            }
        }
        #expect(sawCompacting)
        #expect(contents(try store.load().0) == ["1:keep": "k", "1:hot": "19"])
        #expect(cursor.epoch > readerCursor.epoch)
        guard case .reload(let records, let next) = try reader.update(since: readerCursor) else {
            Issue.record("expected a reload after compaction")
            return
        }
        #expect(contents(records) == ["1:keep": "k", "1:hot": "19"])
        #expect(next.epoch == cursor.epoch)
        // The log was rewritten: far shorter than 20 transactions' worth.
        #expect(readBytes(tmp.path + "/g/log").count < 20 * 200)
        #expect(!FileManager.default.fileExists(atPath: tmp.path + "/g/log.compact"))
        // And a writer that had not seen the compaction catches up.
        let other = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        try other.commit([put("late", "l")])
        try store.commit([put("later", "m")], since: cursor)
        #expect(contents(try reader.load().0) == ["1:keep": "k", "1:hot": "19", "1:late": "l", "1:later": "m"])
    }

    @Test func tornTailIsIgnoredByReadersAndCutByTheNextWriter() throws {
        let tmp = TemporaryDirectory()
        let store = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        try store.commit([put("a", "1")])
        let committed = readBytes(tmp.path + "/g/log")
        // Simulate a crash in the middle of the next append: half a transaction past the end.
        let scratch = try FileStore(group: "h", keyProvider: testPassphrase(), root: tmp.path)
        try scratch.commit([put("zzz", "a long enough payload to tear")])
        let foreign = Array(readBytes(tmp.path + "/h/log")[LogFormat.headerByteCount...])
        writeBytes(committed + foreign.prefix(foreign.count / 2), to: tmp.path + "/g/log")

        let reader = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        #expect(contents(try reader.load().0) == ["1:a": "1"])
        try reader.commit([put("b", "2")])
        #expect(contents(try store.load().0) == ["1:a": "1", "1:b": "2"])
        #expect(readBytes(tmp.path + "/g/log").starts(with: committed))
    }

    @Test func completeTransactionPastThePublishedLengthIsKept() throws {
        let tmp = TemporaryDirectory()
        let store = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        try store.commit([put("a", "1")])
        let stateBefore = readBytes(tmp.path + "/g/state")
        try store.commit([put("b", "2")])
        // A writer that died after its fsync but before publishing: the state still says "a" only.
        writeBytes(stateBefore, to: tmp.path + "/g/state")
        // A reader that already had the group open sees the published part only...
        #expect(contents(try store.load().0) == ["1:a": "1"])
        // ...until a process opens the group (or writes): then the synced transaction is adopted.
        let other = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        #expect(contents(try other.load().0) == ["1:a": "1", "1:b": "2"])
        #expect(contents(try store.load().0) == ["1:a": "1", "1:b": "2"])
        try other.commit([put("c", "3")])
        #expect(contents(try other.load().0) == ["1:a": "1", "1:b": "2", "1:c": "3"])
    }

    @Test func aWriteAppendsTheSameBytesWhateverTheCacheSize() throws {
        let tmp = TemporaryDirectory()
        var growth: [Int] = []
        for (group, size) in [("small", 10), ("large", 2000)] {
            let store = try FileStore(group: group, keyProvider: testPassphrase(), root: tmp.path)
            try store.commit((0..<size).map { put("record-\($0)", String(repeating: "x", count: 100)) })
            let cursor = try store.load().1
            let before = readBytes(tmp.path + "/\(group)/log")
            try store.commit([put("new", "one more record")], since: cursor)
            let after = readBytes(tmp.path + "/\(group)/log")
            // Append only: the old bytes are untouched, and the new bytes do not depend on size.
            #expect(after.starts(with: before))
            growth.append(after.count - before.count)
        }
        #expect(growth[0] == growth[1])
    }

    /// Writes one record again and again to `store` (opened with `compactionMinimumDead: 4`) from
    /// `cursor` until a transaction compacts the log; returns the bytes of the group's `state`
    /// file from before that transaction.
    @discardableResult
    static func writeUntilCompacted(_ store: FileStore, from cursor: StoreCursor, state: String) throws -> [UInt8] {
        var cursor = cursor
        for round in 0..<10 {
            let before = readBytes(state)
            var compacted = false
            cursor = try store.transact(since: cursor) { txn in
                compacted = txn.compacting
                return [put("hot", "\(round)")]
            }
            if compacted { return before }
        }
        Issue.record("no transaction compacted the log")
        return []
    }

    @Test func compactionWhoseWriterDiedBeforePublishingIsFinishedByTheNextOpener() throws {
        let tmp = TemporaryDirectory()
        let store = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path, compactionMinimumDead: 4)
        let cursor = try store.commit([put("keep", "k")])
        let stateBeforeCompaction = try Self.writeUntilCompacted(store, from: cursor, state: tmp.path + "/g/state")
        let expected = contents(try store.load().0)
        // The writer renamed the compacted log into place and died before publishing its epoch:
        // the state still names the old log (and its length).
        writeBytes(stateBeforeCompaction, to: tmp.path + "/g/state")
        let reader = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        #expect(contents(try reader.load().0) == expected)
        try reader.commit([put("after", "a")])
        #expect(contents(try store.load().0).count == expected.count + 1)
        #expect(!FileManager.default.fileExists(atPath: tmp.path + "/g/quarantine"))
    }

    @Test func aWriterHoldingTheOldLogWritesIntoTheCompactedOneItsCompactorLeftUnpublished() throws {
        let tmp = TemporaryDirectory()
        let compactor = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path, compactionMinimumDead: 4)
        let cursor = try compactor.commit([put("keep", "k")])
        // A long-lived writer that has the log of this epoch open.
        let writer = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        _ = try writer.load()
        let stateBeforeCompaction = try Self.writeUntilCompacted(compactor, from: cursor, state: tmp.path + "/g/state")
        // The compactor renamed its log into place and died before publishing its epoch.
        writeBytes(stateBeforeCompaction, to: tmp.path + "/g/state")
        // The writer's commit must land in the file the group's path names, not in the old log
        // it holds open, which the rename unlinked.
        try writer.commit([put("rotated", "r")])
        let opener = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        #expect(contents(try opener.load().0)["1:rotated"] == "r")
    }

    /// A compaction whose sync of the folder fails has not made its rename durable: its epoch is
    /// not published, a write that would go to the new log fails until the folder syncs, and
    /// then the new log is adopted with every record.
    @Test func aCompactionWhoseFolderSyncFailsPublishesItsEpochOnlyOnceTheFolderSyncs() throws {
        let tmp = TemporaryDirectory()
        let store = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path, compactionMinimumDead: 4)
        let cursor = try store.commit([put("keep", "k")])
        let epoch = cursor.epoch
        try SystemCall.$failingSyncs.withValue([.compactionRename]) {
            try Self.writeUntilCompacted(store, from: cursor, state: tmp.path + "/g/state")
            #expect(try store.load().1.epoch == epoch, "the new epoch was published before its rename was durable")
            let error = #expect(throws: TokenCacheError.self) { try store.commit([put("during", "d")]) }
            #expect(error?.code == .ioFailure, "\(String(describing: error))")
        }
        let expected = contents(try store.load().0)
        try store.commit([put("after", "a")])
        let (records, after) = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path).load()
        #expect(after.epoch == epoch + 1)
        #expect(contents(records).count == expected.count + 1)
        #expect(contents(records)["1:during"] == nil)
    }

    @Test func threadsAndInstancesInOneProcessDoNotLoseWrites() async throws {
        let tmp = TemporaryDirectory()
        let first = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        let second = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                let store = task.isMultiple(of: 2) ? first : second
                group.addTask {
                    var cursor = StoreCursor.start
                    for index in 0..<25 {
                        cursor = try store.commit([put("t\(task)-\(index)", "\(index)")], since: cursor)
                        _ = try store.update(since: cursor)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try first.load().0.count == 200)
        #expect(try second.load().0.count == 200)
    }

    @Test func lockTimeoutNamesTheHolder() throws {
        let tmp = TemporaryDirectory()
        let a = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        let b = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path, lockTimeout: .milliseconds(200))
        _ = try a.transact(since: .start) { _ in
            let error = #expect(throws: TokenCacheError.self) { try b.commit([put("x", "1")]) }
            #expect(error?.code == .lockTimeout)
            #expect(error?.message.contains("\(getpid())") == true)
            // Readers do not wait for the writer.
            _ = try b.load()
            return [put("y", "2")]
        }
        try b.commit([put("x", "1")])
        #expect(contents(try a.load().0) == ["1:x": "1", "1:y": "2"])
    }

    @Test func defaultRootFollowsXDG() throws {
        #expect(try GroupDirectory.defaultRoot(xdgDataHome: "/x/data", home: "/home/u") == "/x/data/secure-token-cache")
        #expect(
            try GroupDirectory.defaultRoot(xdgDataHome: "relative", home: "/home/u") == "/home/u/.local/share/secure-token-cache")
        #expect(try GroupDirectory.defaultRoot(xdgDataHome: nil, home: "/home/u") == "/home/u/.local/share/secure-token-cache")
        #expect(throws: TokenCacheError.self) { try GroupDirectory.defaultRoot(xdgDataHome: nil, home: "") }
        #expect(try GroupDirectory.defaultRoot().hasSuffix("/secure-token-cache"))
    }

    @Test(arguments: ["", ".hidden", "a/b", "..", "tab\tname"])
    func badGroupNamesAreRefused(_ name: String) {
        let error = #expect(throws: TokenCacheError.self) {
            try FileStore(group: name, keyProvider: testPassphrase(), root: "/tmp")
        }
        #expect(error?.code == .invalidArgument)
    }
}
