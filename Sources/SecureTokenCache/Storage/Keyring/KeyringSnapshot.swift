/// All of a group's records as one sealed blob: the secret of the group's single "records" item in
/// the Secret Service.
///
/// gnome-keyring rewrites its whole keyring file on every change and slows down with the number
/// of items, so a group never has one item per token: the KeyringStore rewrites this one item per
/// transaction. Layout:
///
/// `"STKS" ‖ format u16le ‖ sequence u64le ‖ count u32le ‖ writer folder id (16 bytes) ‖
/// (length u32le ‖ sealed batch)… ‖ marker`
///
/// The writer folder id is the random id of the coordination folder the writing process used
/// (``KeyringStore``): a reader whose folder has another id knows that the group's writers do not
/// all share its lock and counter, and says so instead of splitting silently.
///
/// The records are sealed by ``RecordSealer`` as puts in batches of at most
/// ``LogFormat/maximumBatchPlaintextByteCount`` of plaintext (usually one): a whole snapshot is
/// sealed on every write, and one box per batch instead of one per record makes that, and
/// opening it, cost little more than the cipher itself. A batch's first sequence number is the
/// position of its first record in the snapshot (0, then the records before it), and its count
/// at least 1; the batches' counts add up to the header's `count`. The marker (a sealed empty box)
/// authenticates the header and a BLAKE2b-256 of the batches' authentication tags (last 16
/// bytes), so batches cannot be dropped, swapped in from an older snapshot or reordered, nor the
/// header edited, unnoticed.
struct KeyringSnapshot: Sendable {
    /// The format version written and read by this code.
    static let formatVersion: UInt16 = 3
    private static let magic = Array("STKS".utf8)
    /// The size of a writer folder id.
    static let writerByteCount = GroupDirectory.identityByteCount
    /// The writer id of a snapshot no process has written.
    static let noWriter = [UInt8](repeating: 0, count: writerByteCount)
    private static let headerByteCount = 4 + 2 + 8 + 4 + writerByteCount

    /// The group's generation this snapshot is: the number of committed transactions.
    var sequence: UInt64
    /// The records, by identity.
    var records: [RecordID: Record]
    /// The id of the coordination folder of the process that wrote this snapshot (zeros: none).
    var writer: [UInt8] = KeyringSnapshot.noWriter

    /// An empty group that has never been written.
    static let empty = KeyringSnapshot(sequence: 0, records: [:])

    /// Applies `changes` in order.
    mutating func apply(_ changes: some Sequence<RecordChange>) {
        for change in changes {
            switch change {
            case .put(let record): records[record.id] = record
            case .delete(let id): records[id] = nil
            }
        }
    }

    /// The sealed bytes of this snapshot.
    func sealed(with sealer: RecordSealer) throws -> [UInt8] {
        let header = Self.header(sequence: sequence, count: records.count, writer: writer)
        var output = header
        let puts = records.values.map(RecordChange.put)
        var tags: [UInt8] = []
        try LogFormat.forEachBatch(of: puts) { batch, _ in
            let lengthOffset = output.count
            output += [0, 0, 0, 0]
            try sealer.sealBatch(puts[batch], firstSequence: UInt64(batch.lowerBound), appendingTo: &output)
            let length = output.count - lengthOffset - 4
            guard length <= Int(UInt32.max) else {
                throw TokenCacheError(.invalidArgument, "the group is too large for one keyring item")
            }
            output.withUnsafeMutableBytes {
                $0.storeBytes(of: UInt32(length).littleEndian, toByteOffset: lengthOffset, as: UInt32.self)
            }
            tags += output[(output.count - XChaCha20Poly1305.tagByteCount)...]
        }
        let digest = tags.withUnsafeBytes { Sodium.checksum($0) }
        try sealer.sealMarker(context: "STKS", associatedData: header + digest, appendingTo: &output)
        return output
    }

    /// Opens a sealed snapshot.
    ///
    /// - Throws: ``TokenCacheError/Code/unsupportedFormat`` for a newer format,
    ///   ``TokenCacheError/Code/storeCorrupted`` for anything malformed or failing to authenticate;
    ///   never returns a shortened group.
    static func open(_ bytes: UnsafeRawBufferPointer, with sealer: RecordSealer) throws -> KeyringSnapshot {
        guard bytes.count >= headerByteCount, bytes[0..<4].elementsEqual(magic) else {
            throw corrupted("the keyring records item is not a SecureTokenCache snapshot")
        }
        let version = UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 4, as: UInt16.self))
        guard version == formatVersion else {
            throw TokenCacheError(
                .unsupportedFormat,
                "the keyring records item has format \(version); this version of the library reads format \(formatVersion) only: open the group with the version that wrote it"
            )
        }
        let sequence = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 6, as: UInt64.self))
        let count = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 14, as: UInt32.self)))
        let writer = Array(bytes[18..<headerByteCount])
        var offset = headerByteCount
        var changes: [RecordChange] = []
        changes.reserveCapacity(min(count, bytes.count / RecordSealer.batchRecordOverhead))
        var nameHashes: [UInt64] = []
        var tags: [UInt8] = []
        var buffers = RecordSealer.OpeningBuffers()
        while changes.count < count {
            guard bytes.count - offset >= 4 else { throw corrupted("the keyring records item is truncated") }
            let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            offset += 4
            guard bytes.count - offset >= length else { throw corrupted("the keyring records item is truncated") }
            let batch = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)])
            // Checked before opening, so a count that does not fit never allocates for it.
            guard let (first, batchCount) = RecordSealer.batchHeader(batch), first == UInt64(changes.count),
                batchCount <= count - changes.count
            else { throw corrupted("the keyring records item holds a batch that does not belong to it") }
            _ = try sealer.openBatch(batch, buffers: &buffers, appendingTo: &changes, nameHashes: &nameHashes)
            offset += length
            tags += bytes[(offset - XChaCha20Poly1305.tagByteCount)..<offset]
        }
        let digest = tags.withUnsafeBytes { Sodium.checksum($0) }
        let marker = UnsafeRawBufferPointer(rebasing: bytes[offset...])
        guard
            sealer.openMarker(
                marker, context: "STKS", associatedData: header(sequence: sequence, count: count, writer: writer) + digest)
        else {
            throw corrupted("the keyring records item failed to authenticate (damaged, truncated, or sealed with another key)")
        }
        var records: [RecordID: Record] = [:]
        records.reserveCapacity(count)
        for change in changes {
            guard case .put(let record) = change, records.updateValue(record, forKey: record.id) == nil else {
                throw corrupted("the keyring records item holds a record that does not belong to it")
            }
        }
        return KeyringSnapshot(sequence: sequence, records: records, writer: writer)
    }

    private static func header(sequence: UInt64, count: Int, writer: [UInt8]) -> [UInt8] {
        var header = magic
        RecordSealer.appendLE(formatVersion, to: &header)
        RecordSealer.appendLE(sequence, to: &header)
        RecordSealer.appendLE(UInt32(count), to: &header)
        header += writer
        return header
    }

    private static func corrupted(_ message: String) -> TokenCacheError {
        TokenCacheError(.storeCorrupted, message)
    }
}
