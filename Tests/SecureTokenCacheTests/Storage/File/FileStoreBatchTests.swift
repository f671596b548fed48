import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

/// The log's batch frames: what a write appends, how a large transaction is split, logs of older
/// versions (one record frame per record), and compaction rewriting a log as batches.
@Suite(.timeLimit(.minutes(3))) struct FileStoreBatchTests {
    static let legacyTransactions: [[RecordChange]] = [
        [put("at-1", "token one"), put("rt-1", "refresh one", kind: .refreshToken), put("acct", "account", kind: .account)],
        [put("at-1", "token one, renewed"), delete("rt-1", kind: .refreshToken), put("at-2", "token two")],
    ]
    static let legacyContents = ["1:at-1": "token one, renewed", "4:acct": "account", "1:at-2": "token two"]

    @Test func aWriteAppendsOneBatchFrameAndOneCommit() throws {
        let tmp = TemporaryDirectory()
        let store = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        try store.commit([put("a", "1"), put("b", "2", kind: .refreshToken), delete("c")])
        try store.commit([put("d", "4")])
        let frames = logFrames(readBytes(tmp.path + "/g/log"))
        #expect(frames.map(\.type) == [3, 2, 3, 2])
        #expect(frames.map(\.count) == [3, 3, 1, 1])
        #expect(frames.map(\.sequence) == [1, 4, 5, 6])
        #expect(sequencesGrowStrictly(frames))
        #expect(contents(try store.load().0) == ["1:a": "1", "2:b": "2", "1:d": "4"])
    }

    /// A transaction of about 4 MiB goes out as several batch frames of at most 1 MiB of records
    /// and one commit; it opens on several threads, in order, whole.
    @Test(.tags(.slow)) func aLargeTransactionIsSplitIntoBatchesThatOpenInOrder() throws {
        let tmp = TemporaryDirectory()
        let store = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        let payload = String(repeating: "p", count: 1000)
        let records = (0..<4000).map { put("record-\($0)", "\($0):" + payload) }
        try store.commit(records + [delete("record-7"), put("record-8", "replaced in the same transaction")])
        let log = readBytes(tmp.path + "/g/log")
        let frames = logFrames(log)
        #expect(frames.count >= 5)
        #expect(frames.dropLast().allSatisfy { $0.type == LogFormat.batchFrame })
        #expect(frames.last?.type == LogFormat.commitFrame && frames.last?.count == 4002)
        #expect(frames.dropLast().reduce(0) { $0 + $1.count } == 4002)
        #expect(sequencesGrowStrictly(frames))
        for (frame, next) in zip(frames, frames.dropFirst()) {
            // Consecutive: no sequence number is skipped inside a transaction.
            #expect(next.sequence == frame.sequence + UInt64(frame.count))
            #expect(next.offset - frame.offset <= 5 + 12 + 40 + LogFormat.maximumBatchPlaintextByteCount)
        }
        var expected: [String: String] = [:]
        for index in 0..<4000 { expected["1:record-\(index)"] = "\(index):" + payload }
        expected["1:record-7"] = nil
        expected["1:record-8"] = "replaced in the same transaction"
        #expect(contents(try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path).load().0) == expected)
        let reader = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        guard case .reload(let reloaded, _) = try reader.update(since: .start) else {
            Issue.record("a cursor from elsewhere reloads")
            return
        }
        #expect(contents(reloaded) == expected)

        // Damage in a middle batch fails the whole group (strict), whichever thread opened it.
        var damaged = log
        damaged[frames[2].offset + 100] ^= 0x20
        writeBytes(damaged, to: tmp.path + "/g/log")
        let error = #expect(throws: TokenCacheError.self) {
            try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path).load()
        }
        #expect(error?.code == .storeCorrupted)
    }

    /// A large transaction whose writer died before publishing it, damaged in one of its middle
    /// batches: the next opener keeps what was published and cuts the rest.
    @Test(.tags(.slow)) func aDamagedUnpublishedLargeTransactionIsCutOff() throws {
        let tmp = TemporaryDirectory()
        let store = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        try store.commit([put("kept", "k")])
        let published = readBytes(tmp.path + "/g/state")
        let before = readBytes(tmp.path + "/g/log")
        try store.commit((0..<3000).map { put("r\($0)", String(repeating: "x", count: 1000)) })
        var log = readBytes(tmp.path + "/g/log")
        let frames = logFrames(log).filter { $0.offset >= before.count }
        #expect(frames.count >= 4)
        log[frames[1].offset + 64] ^= 0x01
        writeBytes(log, to: tmp.path + "/g/log")
        writeBytes(published, to: tmp.path + "/g/state")
        let reopened = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        #expect(contents(try reopened.load().0) == ["1:kept": "k"])
        #expect(readBytes(tmp.path + "/g/log") == before)
        #expect(!FileManager.default.fileExists(atPath: tmp.path + "/g/quarantine"))
    }

    /// A group written by an older version (one record frame per record) opens with the same
    /// contents, takes new writes (batch frames after the old ones), and its next compaction
    /// rewrites it as batch frames only.
    @Test func aLegacyLogLoadsAndCompactionRewritesItAsBatches() throws {
        let tmp = TemporaryDirectory()
        let keyPath = tmp.path + "/group.key"
        try LegacyLog.write(Self.legacyTransactions, group: "old", root: tmp.path, keyPath: keyPath)
        let legacy = readBytes(tmp.path + "/old/log")
        #expect(Set(logFrames(legacy).map(\.type)) == [LogFormat.recordFrame, LogFormat.commitFrame])

        let provider = try KeyFileKeyProvider(path: keyPath)
        let store = try FileStore(group: "old", keyProvider: provider, root: tmp.path, compactionMinimumDead: 4)
        var (records, cursor) = try store.load()
        #expect(contents(records) == Self.legacyContents)
        let reader = try FileStore(group: "old", keyProvider: provider, root: tmp.path)
        let (seen, loadedCursor) = try reader.load()
        var readerCursor = loadedCursor
        var snapshot = contents(seen)
        guard case .reload(let replayed, _) = try reader.update(since: .start) else {
            Issue.record("a cursor from elsewhere reloads")
            return
        }
        #expect(contents(replayed) == Self.legacyContents)

        // New writes go after the old frames as batch frames; the reader follows the mixed log.
        cursor = try store.commit([put("at-3", "token three")], since: cursor)
        let mixed = logFrames(readBytes(tmp.path + "/old/log"))
        #expect(Array(mixed.suffix(2).map(\.type)) == [LogFormat.batchFrame, LogFormat.commitFrame])
        #expect(sequencesGrowStrictly(mixed))
        let update = try reader.update(since: readerCursor)
        guard case .changes(let changes, let next) = update else {
            Issue.record("the reader catches up on the new transaction, got \(update)")
            return
        }
        #expect(changes.map(\.id.name) == ["at-3"])
        apply(update, to: &snapshot)
        readerCursor = next

        var expected = Self.legacyContents
        expected["1:at-3"] = "token three"
        var compacted = false
        for round in 0..<20 where !compacted {
            cursor = try store.transact(since: cursor) { transaction in
                compacted = transaction.compacting
                return [put("at-2", "token two, round \(round)")]
            }
            expected["1:at-2"] = "token two, round \(round)"
        }
        #expect(compacted)
        let rewritten = logFrames(readBytes(tmp.path + "/old/log"))
        #expect(rewritten.map(\.type).allSatisfy { $0 == LogFormat.batchFrame || $0 == LogFormat.commitFrame })
        #expect(rewritten.filter { $0.type == LogFormat.commitFrame }.count == 1)
        #expect(rewritten.last?.count == expected.count)
        // Sequence numbers keep growing across the rewrite.
        #expect(rewritten.first.map { $0.sequence > mixed.last!.sequence } == true)
        (records, _) = try store.load()
        #expect(contents(records) == expected)
        #expect(contents(try FileStore(group: "old", keyProvider: provider, root: tmp.path).load().0) == expected)
        apply(try reader.update(since: readerCursor), to: &snapshot)
        #expect(snapshot == expected)
        #expect(!FileManager.default.fileExists(atPath: tmp.path + "/old/quarantine"))
    }

    /// Every byte of a legacy log is still protected: a flip gives the same contents or a clear
    /// error, never other contents.
    @Test(.tags(.slow)) func everyFlippedByteOfALegacyLogIsDetected() throws {
        let tmp = TemporaryDirectory()
        let keyPath = tmp.path + "/group.key"
        try LegacyLog.write(Self.legacyTransactions, group: "old", root: tmp.path, keyPath: keyPath)
        let provider = try KeyFileKeyProvider(path: keyPath)
        let pristine = readBytes(tmp.path + "/old/log")
        let state = readBytes(tmp.path + "/old/state")
        for index in LogFormat.headerByteCount..<pristine.count {
            var damaged = pristine
            damaged[index] ^= 0x01
            writeBytes(damaged, to: tmp.path + "/old/log")
            let error = #expect(throws: TokenCacheError.self, "byte \(index)") {
                try FileStore(group: "old", keyProvider: provider, root: tmp.path).load()
            }
            #expect(error?.code == .storeCorrupted, "byte \(index)")
            writeBytes(pristine, to: tmp.path + "/old/log")
            writeBytes(state, to: tmp.path + "/old/state")
            try? FileManager.default.removeItem(atPath: tmp.path + "/old/quarantine")
        }
        #expect(contents(try FileStore(group: "old", keyProvider: provider, root: tmp.path).load().0) == Self.legacyContents)
    }

    /// Compaction keeps every live record through puts, overwrites and deletes, across record
    /// kinds and large transactions, and the group reads the same from every path afterwards.
    @Test func compactionKeepsEveryLiveRecord() throws {
        let tmp = TemporaryDirectory()
        let store = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path, compactionMinimumDead: 16)
        let follower = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        var (_, followerCursor) = try follower.load()
        var followed: [String: String] = [:]
        var model: [String: String] = [:]
        var cursor = StoreCursor.start
        var compactions = 0
        var generator = SplitMix(seed: 7)
        for round in 0..<120 {
            cursor = try store.transact(since: cursor) { transaction in
                if transaction.compacting { compactions += 1 }
                var changes: [RecordChange] = []
                let size = round == 40 ? 2500 : Int(generator.next() % 6) + 1
                for _ in 0..<size {
                    let kind: RecordKind = generator.next() % 3 == 0 ? .refreshToken : .accessToken
                    let name = "r\(generator.next() % (round == 40 ? 5000 : 300))"
                    let key = "\(kind.rawValue):\(name)"
                    if generator.next() % 4 == 0 {
                        changes.append(delete(name, kind: kind))
                        model[key] = nil
                    } else {
                        let value = "\(round)-" + String(repeating: "v", count: Int(generator.next() % 600))
                        changes.append(put(name, value, kind: kind))
                        model[key] = value
                    }
                }
                return changes
            }
            if round % 7 == 0 {
                let update = try follower.update(since: followerCursor)
                apply(update, to: &followed)
                followerCursor = update.cursor
                #expect(followed == model, "round \(round)")
            }
        }
        #expect(compactions >= 3)
        #expect(contents(try store.load().0) == model)
        #expect(contents(try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path).load().0) == model)
        let update = try follower.update(since: followerCursor)
        apply(update, to: &followed)
        #expect(followed == model)
        #expect(sequencesGrowStrictly(logFrames(readBytes(tmp.path + "/g/log"))))
    }

    /// A growing group (no record ever replaced) has nothing to reclaim: it never compacts, so
    /// readers keep following it by changes.
    @Test func aGrowingGroupDoesNotCompact() throws {
        let tmp = TemporaryDirectory()
        let store = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path, compactionMinimumDead: 4)
        var cursor = StoreCursor.start
        for round in 0..<50 {
            cursor = try store.transact(since: cursor) { transaction in
                #expect(!transaction.compacting)
                return [put("r\(round)", "v")]
            }
        }
        #expect(cursor.epoch == 1)
    }
}

/// A small deterministic generator (SplitMix64), so a failing run can be repeated.
struct SplitMix {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
