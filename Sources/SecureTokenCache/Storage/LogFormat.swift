/// The byte layout of a group's append-only log.
///
/// A log file is a 32-byte header (`"STCLOG01"` ‖ epoch u16 ‖ six zero bytes ‖ group id) followed
/// by frames, each `length u32le ‖ type u8 ‖ body` (`length` counts type and body):
/// - a **record frame** (type 1) holds one sealed record (see ``RecordSealer``);
/// - a **commit frame** (type 2, 65 bytes in all) ends a transaction: `sequence u64 ‖ record count
///   u32 ‖ previous commit's sequence u64 ‖ sealed marker`, whose associated data binds those
///   three numbers and a BLAKE2b-256 of the transaction's record frames' authentication tags
///   (each tag already authenticates its whole frame, so hashing the tags binds the frames
///   without hashing every byte twice). So a transaction is all or nothing, transactions chain
///   (none can be dropped from the middle or swapped), and sequence numbers only grow.
enum LogFormat {
    /// The log header's size.
    static let headerByteCount = 32
    /// The size of a commit frame.
    static let commitFrameByteCount = 65
    /// No frame is larger (a sanity bound when parsing).
    static let maximumFrameByteCount = 64 << 20
    static let recordFrame: UInt8 = 1
    static let commitFrame: UInt8 = 2
    private static let magic = Array("STCLOG01".utf8)
    private static let commitContext: StaticString = "CMIT"

    /// The header of a log file of `epoch` for the group `groupID`.
    static func header(epoch: UInt16, groupID: [UInt8]) -> [UInt8] {
        var out = magic
        RecordSealer.appendLE(epoch, to: &out)
        out += [UInt8](repeating: 0, count: 6)
        out += groupID
        return out
    }

    /// Appends a record frame holding `change` sealed with `sequence`.
    static func appendRecordFrame(_ change: RecordChange, sequence: UInt64, sealer: RecordSealer, to output: inout [UInt8]) throws
    {
        let start = output.count
        output += [0, 0, 0, 0, recordFrame]
        try sealer.seal(change, sequence: sequence, appendingTo: &output)
        let length = UInt32(output.count - start - 4)
        output.withUnsafeMutableBytes { $0.storeBytes(of: length.littleEndian, toByteOffset: start, as: UInt32.self) }
    }

    /// Appends the commit frame for the record frames in `output[recordsStart...]`.
    static func appendCommitFrame(
        sequence: UInt64, count: Int, previousCommit: UInt64, recordsStart: Int, sealer: RecordSealer, to output: inout [UInt8]
    ) throws {
        let digest = output.withUnsafeBytes { transactionDigest(UnsafeRawBufferPointer(rebasing: $0[recordsStart...])) }
        var numbers: [UInt8] = []
        RecordSealer.appendLE(sequence, to: &numbers)
        RecordSealer.appendLE(UInt32(count), to: &numbers)
        RecordSealer.appendLE(previousCommit, to: &numbers)
        RecordSealer.appendLE(UInt32(commitFrameByteCount - 4), to: &output)
        output.append(commitFrame)
        output += numbers
        try sealer.sealMarker(context: commitContext, associatedData: numbers + digest, appendingTo: &output)
    }

    /// The BLAKE2b-256 of the authentication tags (last 16 bytes) of the record frames that make
    /// up `frames` exactly (the caller has checked their lengths).
    static func transactionDigest(_ frames: UnsafeRawBufferPointer) -> [UInt8] {
        var tags: [UInt8] = []
        tags.reserveCapacity(frames.count / 64)
        var offset = 0
        while offset + 4 <= frames.count {
            let end = offset + 4 + Int(UInt32(littleEndian: frames.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            guard end <= frames.count, end - offset >= 4 + XChaCha20Poly1305.tagByteCount else { break }
            tags += frames[(end - XChaCha20Poly1305.tagByteCount)..<end]
            offset = end
        }
        return tags.withUnsafeBytes { Sodium.checksum($0) }
    }

    /// The sequence number of the commit frame that ends right at `end` in `bytes`, or `nil`
    /// when the bytes there are not shaped like a commit frame.
    static func sequenceOfCommitFrame(endingAt end: Int, in bytes: UnsafeRawBufferPointer) -> UInt64? {
        let start = end - commitFrameByteCount
        guard start >= 0, end <= bytes.count,
            UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt32.self)) == UInt32(commitFrameByteCount - 4),
            bytes[start + 4] == commitFrame
        else { return nil }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: start + 5, as: UInt64.self))
    }

    /// Whether `bytes` is the header of a log of `epoch` for the group `groupID`.
    static func headerMatches(_ bytes: some Collection<UInt8>, epoch: UInt16, groupID: [UInt8]) -> Bool {
        bytes.count >= headerByteCount && bytes.prefix(headerByteCount).elementsEqual(header(epoch: epoch, groupID: groupID))
    }
}
