/// The byte layout of a group's append-only log.
///
/// A log file is a 32-byte header (`"STCLOG01"` ‖ epoch u16 ‖ six zero bytes ‖ group id) followed
/// by frames, each `length u32le ‖ type u8 ‖ body` (`length` counts type and body). A transaction
/// is one or more record-carrying frames and then a commit frame:
/// - a **batch frame** (type 3) holds one sealed batch of records,
///   `firstSequence u64le ‖ count u32le ‖ box` (see ``RecordSealer``). A transaction's records
///   are split into batches of at most ``maximumBatchPlaintextByteCount`` (a record larger than
///   that gets a batch of its own), so a large transaction opens on several threads and no
///   single box gets huge;
/// - a **commit frame** (type 2, 65 bytes in all) ends a transaction: `sequence u64 ‖ record count
///   u32 ‖ previous commit's sequence u64 ‖ sealed marker`, whose associated data binds those
///   three numbers and a BLAKE2b-256 of the authentication tags (last 16 bytes) of the
///   transaction's frames (each tag already authenticates its whole frame, so hashing the tags
///   binds the frames without hashing every byte twice). So a transaction is all or nothing,
///   transactions chain (none can be dropped from the middle or swapped), and sequence numbers
///   only grow: every record takes the next number (a batch's records take consecutive ones) and
///   the commit the one after its last record.
///
/// No other frame type exists. ``LogScanner`` reports a frame of any other type in committed data
/// as ``TokenCacheError/Code/storeCorrupted`` (damage, not a newer format: a newer format raises
/// the ``GroupHeader``'s format version, which opening a group checks first), and treats one in an unpublished tail as a torn append.
enum LogFormat {
    /// The log header's size.
    static let headerByteCount = 32
    /// The size of a commit frame.
    static let commitFrameByteCount = 65
    /// No frame is larger (a sanity bound when parsing).
    static let maximumFrameByteCount = 64 << 20
    /// Batches are cut at this much plaintext (1 MiB): big enough that a box's fixed cost
    /// vanishes, small enough that a large checkpoint opens on several threads.
    static let maximumBatchPlaintextByteCount = 1 << 20
    /// The type of a commit frame.
    static let commitFrame: UInt8 = 2
    /// The type of a frame holding a sealed batch of records.
    static let batchFrame: UInt8 = 3
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

    /// Appends `changes` as batch frames whose records take the sequence numbers from
    /// `firstSequence` on, and returns the number after the last one (the commit's). No frames
    /// for no changes.
    ///
    /// Throws ``TokenCacheError/Code/invalidArgument`` if a record is too large for a frame
    /// (``maximumFrameByteCount``: it could never be read back); `output` is unchanged then.
    /// The one rule for cutting records into sealed batches, used by the log and the keyring
    /// snapshot alike: consecutive changes, as many as fit in ``maximumBatchPlaintextByteCount``
    /// of plaintext (a record larger than that gets a batch of its own). Calls `body` with each
    /// batch's range in `changes` and its plaintext size, in order.
    static func forEachBatch(
        of changes: [RecordChange], _ body: (_ batch: Range<Int>, _ plaintextCount: Int) throws -> Void
    ) rethrows {
        var batchStart = 0
        while batchStart < changes.count {
            var batchEnd = batchStart
            var plaintextCount = 0
            repeat {
                plaintextCount += RecordSealer.batchPlaintextByteCount(of: changes[batchEnd])
                batchEnd += 1
            } while batchEnd < changes.count
                && plaintextCount + RecordSealer.batchPlaintextByteCount(of: changes[batchEnd]) <= maximumBatchPlaintextByteCount
            try body(batchStart..<batchEnd, plaintextCount)
            batchStart = batchEnd
        }
    }

    static func appendBatchFrames(
        _ changes: [RecordChange], firstSequence: UInt64, sealer: RecordSealer, to output: inout [UInt8]
    ) throws -> UInt64 {
        let outputStart = output.count
        var sequence = firstSequence
        do {
            try forEachBatch(of: changes) { batch, plaintextCount in
                let frameLength = 1 + RecordSealer.batchPrefixByteCount + XChaCha20Poly1305.overhead + plaintextCount
                guard frameLength <= maximumFrameByteCount else {
                    throw TokenCacheError(
                        .invalidArgument, "a record is too large to store (\(plaintextCount) bytes; the limit is 64 MiB)")
                }
                let frameStart = output.count
                output += [0, 0, 0, 0, batchFrame]
                try sealer.sealBatch(changes[batch], firstSequence: sequence, appendingTo: &output)
                let length = UInt32(output.count - frameStart - 4)
                output.withUnsafeMutableBytes {
                    $0.storeBytes(of: length.littleEndian, toByteOffset: frameStart, as: UInt32.self)
                }
                sequence += UInt64(batch.count)
            }
        } catch {
            output.removeSubrange(outputStart...)
            throw error
        }
        return sequence
    }

    /// Appends the commit frame for the batch frames in `output[recordsStart...]`, which hold
    /// `count` records.
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

    /// The BLAKE2b-256 of the authentication tags (last 16 bytes) of the batch frames that make
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

    /// The epoch named by the log header at the start of `bytes`, or `nil` when they do not start
    /// with a whole header of a log of the group `groupID`.
    static func epoch(ofHeader bytes: [UInt8], groupID: [UInt8]) -> UInt16? {
        guard bytes.count >= headerByteCount else { return nil }
        let epoch = UInt16(bytes[8]) | UInt16(bytes[9]) << 8
        return headerMatches(bytes, epoch: epoch, groupID: groupID) ? epoch : nil
    }
}
