import TestSupport
import Testing

@testable import SecureTokenCache

/// Sealed batches: many records in one box, every byte authenticated, every length checked.
@Suite(.timeLimit(.minutes(3))) struct BatchSealingTests {
    let changes: [RecordChange] = [
        put("uid.utid-login.microsoftonline.com-accesstoken-client-tenant-user.read", #"{"secret":"eyJ0eXAi.token"}"#),
        put("uid.utid-login.microsoftonline.com-refreshtoken-client--", #"{"secret":"0.ARwA-refresh"}"#, kind: .refreshToken),
        delete("an-expired-token"),
        put("empty-payload", ""),
        put("naïve-ünïcødé-näme", "ok", kind: .account),
        delete("a-client", kind: .clientState),
    ]

    private func sealed(_ sealer: RecordSealer, _ changes: [RecordChange], firstSequence: UInt64 = 41) throws -> [UInt8] {
        var out: [UInt8] = []
        try sealer.sealBatch(changes, firstSequence: firstSequence, appendingTo: &out)
        return out
    }

    private func describe(_ changes: [RecordChange]) -> [String] {
        changes.map {
            switch $0 {
            case .put(let record): "put \(record.id.kind) \(record.id.name)=\(String(decoding: record.payload, as: UTF8.self))"
            case .delete(let id): "delete \(id.kind) \(id.name)"
            }
        }
    }

    @Test func roundTripKeepsOrderKindsAndSequence() throws {
        let sealer = try RecordSealer(groupKey: SecretKey(), groupName: "group")
        let bytes = try sealed(sealer, changes)
        let plaintextCount = changes.reduce(0) { $0 + RecordSealer.batchPlaintextByteCount(of: $1) }
        #expect(bytes.count == RecordSealer.batchPrefixByteCount + XChaCha20Poly1305.overhead + plaintextCount)
        let opened = try bytes.withUnsafeBytes { try sealer.openBatch($0) }
        #expect(opened.firstSequence == 41)
        #expect(describe(opened.changes) == describe(changes))
        let header = bytes.withUnsafeBytes { RecordSealer.batchHeader($0) }
        #expect(header?.firstSequence == 41 && header?.count == changes.count)

        // The loop form appends after what is there, with a name hash per change.
        var all: [RecordChange] = [put("before", "x")]
        var hashes: [UInt64] = [0]
        var buffers = RecordSealer.OpeningBuffers()
        let first = try bytes.withUnsafeBytes {
            try sealer.openBatch($0, buffers: &buffers, appendingTo: &all, nameHashes: &hashes)
        }
        #expect(first == 41)
        #expect(describe(Array(all.dropFirst())) == describe(changes))
        #expect(Array(hashes.dropFirst()) == changes.map { RecordNameHash.hash($0.id) })
    }

    @Test(.tags(.slow)) func oneRecordAndLargeRecordsRoundTrip() throws {
        let sealer = try RecordSealer(groupKey: SecretKey(), groupName: "group")
        let large = put("large", String(repeating: "x", count: 3 << 20))
        for batch in [[changes[0]], [large], [large, changes[1], large]] {
            let opened = try sealed(sealer, batch, firstSequence: 1).withUnsafeBytes { try sealer.openBatch($0) }
            #expect(describe(opened.changes) == describe(batch))
        }
    }

    @Test func anEmptyBatchOrAnOverflowingSequenceIsRefused() throws {
        let sealer = try RecordSealer(groupKey: SecretKey(), groupName: "group")
        var out: [UInt8] = [7]
        let empty = #expect(throws: TokenCacheError.self) { try sealer.sealBatch([], firstSequence: 1, appendingTo: &out) }
        #expect(empty?.code == .invalidArgument)
        let overflow = #expect(throws: TokenCacheError.self) {
            try sealer.sealBatch(changes, firstSequence: UInt64.max - 2, appendingTo: &out)
        }
        #expect(overflow?.code == .invalidArgument)
        #expect(out == [7])
    }

    @Test func sealedBytesHoldNoPlaintext() throws {
        let sealer = try RecordSealer(groupKey: SecretKey(), groupName: "group")
        let bytes = try sealed(sealer, changes)
        for needle in ["secret", "eyJ0eXAi", "accesstoken", "user.read", "expired", "refresh", "a-client"] {
            #expect(!contains(bytes, Array(needle.utf8)), "\(needle)")
        }
    }

    @Test func everyFlippedByteAndEveryTruncationIsDetected() throws {
        let sealer = try RecordSealer(groupKey: SecretKey(), groupName: "group")
        let bytes = try sealed(sealer, changes)
        for index in bytes.indices {
            var damaged = bytes
            damaged[index] ^= 0x01
            let error = #expect(throws: TokenCacheError.self, "flip at \(index)") {
                try damaged.withUnsafeBytes { try sealer.openBatch($0) }
            }
            #expect(error?.code == .storeCorrupted)
        }
        for length in 0..<bytes.count {
            let error = #expect(throws: TokenCacheError.self, "cut to \(length)") {
                try bytes[..<length].withUnsafeBytes { try sealer.openBatch($0) }
            }
            #expect(error?.code == .storeCorrupted)
        }
        // Extra bytes after the box are damage too.
        #expect(throws: TokenCacheError.self) { try (bytes + [0]).withUnsafeBytes { try sealer.openBatch($0) } }
    }

    @Test func wrongKeyGroupFirstSequenceOrCountIsDetected() throws {
        let key = try SecretKey()
        let a = try key.withUnsafeBytes { try RecordSealer(groupKey: SecretKey(copying: $0), groupName: "a") }
        let b = try key.withUnsafeBytes { try RecordSealer(groupKey: SecretKey(copying: $0), groupName: "b") }
        let sameKey = try key.withUnsafeBytes { try RecordSealer(groupKey: SecretKey(copying: $0), groupName: "a") }
        let otherKey = try RecordSealer(groupKey: SecretKey(), groupName: "a")
        let bytes = try sealed(a, changes, firstSequence: 41)
        #expect(throws: TokenCacheError.self) { try bytes.withUnsafeBytes { try b.openBatch($0) } }
        #expect(throws: TokenCacheError.self) { try bytes.withUnsafeBytes { try otherKey.openBatch($0) } }
        #expect(try bytes.withUnsafeBytes { try sameKey.openBatch($0) }.changes.count == changes.count)

        // Rewrite the clear prefix as an attacker would: another position, or fewer records.
        var otherSequence = bytes
        otherSequence[0] = 42
        var fewer = bytes
        fewer[8] = UInt8(changes.count - 1)
        var more = bytes
        more[8] = UInt8(changes.count + 1)
        for damaged in [otherSequence, fewer, more] {
            let error = #expect(throws: TokenCacheError.self) { try damaged.withUnsafeBytes { try a.openBatch($0) } }
            #expect(error?.code == .storeCorrupted)
        }
    }

    /// Authentic boxes whose plaintext breaks the record layout (only a writer with the key could
    /// make them; a bug, say): every one is refused, none crashes or opens short. A record of a
    /// kind this version does not know is no damage but a newer version's: a typed error that
    /// says to upgrade.
    @Test(arguments: MalformedPlaintext.allCases)
    func authenticButMalformedContentsAreRefused(_ malformed: MalformedPlaintext) throws {
        let key = try SecretKey()
        let sealer = try key.withUnsafeBytes { try RecordSealer(groupKey: SecretKey(copying: $0), groupName: "g") }
        let (plaintext, count) = malformed.plaintext
        // The associated data as the format defines it: "STCB" ‖ version ‖ group ‖ prefix.
        var prefix: [UInt8] = []
        RecordSealer.appendLE(UInt64(1), to: &prefix)
        RecordSealer.appendLE(UInt32(count), to: &prefix)
        var associatedData = Array("STCB".utf8)
        RecordSealer.appendLE(RecordSealer.formatVersion, to: &associatedData)
        RecordSealer.appendLE(UInt16(1), to: &associatedData)
        associatedData += Array("g".utf8) + prefix
        var bytes = prefix
        try plaintext.withUnsafeBytes { plain in
            try associatedData.withUnsafeBytes { ad in
                try XChaCha20Poly1305.seal(plain, using: key, authenticating: ad, appendingTo: &bytes)
            }
        }
        let error = #expect(throws: TokenCacheError.self) { try bytes.withUnsafeBytes { try sealer.openBatch($0) } }
        if malformed == .unknownKind {
            #expect(error?.code == .unsupportedFormat)
            #expect(error?.message.contains("upgrade SecureTokenCache") == true)
        } else {
            #expect(error?.code == .storeCorrupted)
        }
    }

    /// Ways an authentic batch's plaintext can break the layout.
    enum MalformedPlaintext: CaseIterable {
        case fewerRecordsThanCounted, bytesAfterTheLastRecord, unknownOperation, unknownKind, nameRunsPastTheEnd
        case payloadRunsPastTheEnd, deleteWithPayload, nameNotUTF8, cutInsideLengths

        /// A record: op, kind, name, payload.
        static func record(_ op: UInt8, _ kind: UInt8, _ name: [UInt8], _ payload: [UInt8]) -> [UInt8] {
            var bytes = [op, kind]
            RecordSealer.appendLE(UInt32(name.count), to: &bytes)
            bytes += name
            RecordSealer.appendLE(UInt32(payload.count), to: &bytes)
            return bytes + payload
        }

        /// The plaintext, and the count the prefix claims.
        var plaintext: ([UInt8], Int) {
            let good = Self.record(1, 1, Array("name".utf8), Array("payload".utf8))
            switch self {
            case .fewerRecordsThanCounted: return (good + good, 3)
            case .bytesAfterTheLastRecord: return (good + good + [0], 2)
            case .unknownOperation: return (good + Self.record(3, 1, [0x61], []), 2)
            case .unknownKind: return (Self.record(1, 200, [0x61], []) + good, 2)
            case .nameRunsPastTheEnd:
                var bad = good
                bad[2] = 200
                return (bad, 1)
            case .payloadRunsPastTheEnd:
                var bad = good
                bad[2 + 4 + 4] = 8
                return (bad, 1)
            case .deleteWithPayload: return (Self.record(2, 1, [0x61], [1]), 1)
            case .nameNotUTF8: return (Self.record(1, 1, [0xC3, 0x28], [1]), 1)
            case .cutInsideLengths: return (good + Array(good.prefix(7)), 2)
            }
        }
    }
}
