import TestSupport
import Testing

@testable import SecureTokenCache

/// The sealed snapshot format of the keyring's records item (no keyring needed).
@Suite(.timeLimit(.minutes(3))) struct KeyringSnapshotTests {
    let sealer: RecordSealer

    init() throws {
        sealer = try RecordSealer(groupKey: SecretKey(), groupName: "snapshot-tests")
    }

    private func snapshot(sequence: UInt64, _ records: [(String, String)]) -> KeyringSnapshot {
        var snapshot = KeyringSnapshot(sequence: sequence, records: [:])
        snapshot.apply(records.map { .put(KeyringTestSupport.record($0.0, $0.1)) })
        return snapshot
    }

    private func open(_ bytes: [UInt8], with sealer: RecordSealer? = nil) throws -> KeyringSnapshot {
        try bytes.withUnsafeBytes { try KeyringSnapshot.open($0, with: sealer ?? self.sealer) }
    }

    @Test func roundTrip() throws {
        let original = snapshot(sequence: 7, [("a", "alpha"), ("b", "beta"), ("c", String(repeating: "x", count: 3000))])
        let opened = try open(original.sealed(with: sealer))
        #expect(opened.sequence == 7)
        #expect(
            KeyringTestSupport.payloads(Array(opened.records.values))
                == KeyringTestSupport.payloads(Array(original.records.values)))
        let empty = try open(KeyringSnapshot.empty.sealed(with: sealer))
        #expect(empty.sequence == 0 && empty.records.isEmpty)
    }

    @Test func sealedBytesRevealNoNameOrPayload() throws {
        let bytes = try snapshot(sequence: 1, [("alice@contoso.example-accesstoken", "secret-token")]).sealed(with: sealer)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(!text.contains("alice"))
        #expect(!text.contains("secret-token"))
    }

    @Test func everyFlippedByteAndEveryTruncationIsAnError() throws {
        let bytes = try snapshot(sequence: 3, [("a", "alpha"), ("b", "beta")]).sealed(with: sealer)
        for index in bytes.indices {
            var damaged = bytes
            damaged[index] ^= 0x01
            let error = #expect(throws: TokenCacheError.self, "flip at \(index)") { try open(damaged) }
            #expect(error?.code == .storeCorrupted || error?.code == .unsupportedFormat)
        }
        for length in 0..<bytes.count {
            let error = #expect(throws: TokenCacheError.self, "truncated to \(length)") { try open(Array(bytes[..<length])) }
            #expect(error?.code == .storeCorrupted)
        }
    }

    @Test func anotherGroupsKeyDoesNotOpenIt() throws {
        let bytes = try snapshot(sequence: 1, [("a", "alpha")]).sealed(with: sealer)
        let other = try RecordSealer(groupKey: SecretKey(), groupName: "snapshot-tests")
        let error = #expect(throws: TokenCacheError.self) { try open(bytes, with: other) }
        #expect(error?.code == .storeCorrupted)
    }

    /// A record sealed into an older snapshot cannot be spliced into a newer one.
    @Test func aRecordFromAnotherSequenceIsRejected() throws {
        let old = try snapshot(sequence: 1, [("a", "old!")]).sealed(with: sealer)
        var new = try snapshot(sequence: 2, [("a", "new!")]).sealed(with: sealer)
        #expect(old.count == new.count)
        let header = 4 + 2 + 8 + 4 + KeyringSnapshot.writerByteCount
        let recordLength = Int(old[header]) | Int(old[header + 1]) << 8
        let range = header..<(header + 4 + recordLength)
        new.replaceSubrange(range, with: old[range])
        let error = #expect(throws: TokenCacheError.self) { try open(new) }
        #expect(error?.code == .storeCorrupted)
    }

    @Test func aNewerFormatIsUnsupported() throws {
        var bytes = try snapshot(sequence: 1, [("a", "alpha")]).sealed(with: sealer)
        bytes[4] = UInt8(KeyringSnapshot.formatVersion + 1)
        let error = #expect(throws: TokenCacheError.self) { try open(bytes) }
        #expect(error?.code == .unsupportedFormat)
    }

    /// A group larger than one batch is sealed as several; they open whole and in place, and
    /// none can be dropped or swapped for another snapshot's.
    @Test(.tags(.slow)) func aLargeSnapshotTakesSeveralBatchesBoundToIt() throws {
        let payload = String(repeating: "p", count: 1500)
        let records = (0..<2000).map { ("record-\($0)", "\($0):" + payload) }
        let original = snapshot(sequence: 5, records)
        let bytes = try original.sealed(with: sealer)
        let batches = Self.batches(bytes)
        #expect(batches.count >= 3)
        let opened = try open(bytes)
        #expect(opened.sequence == 5)
        #expect(KeyringTestSupport.payloads(Array(opened.records.values)).count == 2000)
        #expect(
            KeyringTestSupport.payloads(Array(opened.records.values))
                == KeyringTestSupport.payloads(Array(original.records.values)))

        // Dropping a batch (and fixing the count) or taking one from a snapshot at another
        // sequence fails to authenticate.
        var dropped = bytes
        dropped.removeSubrange(batches[1])
        let remaining = 2000 - Int(bytes[batches[1].lowerBound + 12]) - Int(bytes[batches[1].lowerBound + 13]) << 8
        dropped.replaceSubrange(14..<18, with: withUnsafeBytes(of: UInt32(remaining).littleEndian) { Array($0) })
        #expect(throws: TokenCacheError.self) { try open(dropped) }
        let other = try snapshot(sequence: 6, records).sealed(with: sealer)
        let otherBatches = Self.batches(other)
        var spliced = bytes
        spliced.replaceSubrange(batches[0], with: other[otherBatches[0]])
        let error = #expect(throws: TokenCacheError.self) { try open(spliced) }
        #expect(error?.code == .storeCorrupted)
    }

    /// Where each `length ‖ sealed batch` entry of a snapshot is.
    private static func batches(_ bytes: [UInt8]) -> [Range<Int>] {
        let count = bytes.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 14, as: UInt32.self))) }
        var ranges: [Range<Int>] = []
        var offset = 18 + KeyringSnapshot.writerByteCount
        var records = 0
        while records < count {
            let length = bytes.withUnsafeBytes {
                Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            }
            records += bytes.withUnsafeBytes {
                Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
            }
            ranges.append(offset..<(offset + 4 + length))
            offset += 4 + length
        }
        return ranges
    }
}
