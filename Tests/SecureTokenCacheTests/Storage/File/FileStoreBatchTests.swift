import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

/// The log's batch frames: what a write appends, how a large transaction is split, that no other
/// frame type is read, and compaction rewriting a log as batches.
@Suite(.timeLimit(.minutes(3))) struct FileStoreBatchTests {

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

    /// The log holds batch and commit frames only: a committed frame of any other type is damage
    /// (``TokenCacheError/Code/storeCorrupted``, the file quarantined), never a frame to skip.
    @Test func aCommittedFrameOfAnUnknownTypeIsCorruption() throws {
        let tmp = TemporaryDirectory()
        let store = try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path)
        try store.commit([put("a", "1")])
        try store.commit([put("b", "2")])
        let log = readBytes(tmp.path + "/g/log")
        let state = readBytes(tmp.path + "/g/state")
        let batch = try #require(logFrames(log).last { $0.type == LogFormat.batchFrame })
        for type: UInt8 in [0, 1, 4, 0xFF] {
            var damaged = log
            damaged[batch.offset + 4] = type
            writeBytes(damaged, to: tmp.path + "/g/log")
            let error = #expect(throws: TokenCacheError.self, "type \(type)") {
                try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path).load()
            }
            #expect(error?.code == .storeCorrupted, "type \(type)")
            #expect(error?.message.contains("unknown type") == true, "type \(type)")
            #expect(FileManager.default.fileExists(atPath: tmp.path + "/g/quarantine"), "type \(type)")
            writeBytes(log, to: tmp.path + "/g/log")
            writeBytes(state, to: tmp.path + "/g/state")
            try FileManager.default.removeItem(atPath: tmp.path + "/g/quarantine")
        }
        #expect(
            contents(try FileStore(group: "g", keyProvider: testPassphrase(), root: tmp.path).load().0) == [
                "1:a": "1", "1:b": "2",
            ])
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
