/// All of a group's records as one sealed blob: the secret of the group's single "records" item in
/// the Secret Service.
///
/// gnome-keyring rewrites its whole keyring file on every change and slows down with the number
/// of items, so a group never has one item per token: the KeyringStore rewrites this one item per
/// transaction. Layout:
///
/// `"STKS" ‖ format u16le ‖ sequence u64le ‖ count u32le ‖ (length u32le ‖ sealed record) × count ‖ marker`
///
/// Every record is sealed by ``RecordSealer`` as a put with the snapshot's sequence number, so a
/// record cannot be replayed from an older snapshot; the marker (a sealed empty box whose
/// associated data is the header) binds the sequence and the count, so records cannot be dropped
/// or the header edited unnoticed.
struct KeyringSnapshot: Sendable {
    /// The format version written by this code.
    static let formatVersion: UInt16 = 1
    private static let magic = Array("STKS".utf8)
    private static let headerByteCount = 4 + 2 + 8 + 4

    /// The group's generation this snapshot is: the number of committed transactions.
    var sequence: UInt64
    /// The records, by identity.
    var records: [RecordID: Record]

    /// An empty group that has never been written.
    static let empty = KeyringSnapshot(sequence: 0, records: [:])

    /// Applies `changes` in order.
    mutating func apply(_ changes: [RecordChange]) {
        for change in changes {
            switch change {
            case .put(let record): records[record.id] = record
            case .delete(let id): records[id] = nil
            }
        }
    }

    /// The sealed bytes of this snapshot.
    func sealed(with sealer: RecordSealer) throws -> [UInt8] {
        var output = Self.header(sequence: sequence, count: records.count)
        var sealedRecord: [UInt8] = []
        for record in records.values {
            sealedRecord.removeAll(keepingCapacity: true)
            try sealer.seal(.put(record), sequence: sequence, appendingTo: &sealedRecord)
            RecordSealer.appendLE(UInt32(sealedRecord.count), to: &output)
            output += sealedRecord
        }
        try sealer.sealMarker(
            context: "STKS", associatedData: Self.header(sequence: sequence, count: records.count), appendingTo: &output)
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
                "the keyring records item has format \(version); this version of the library reads format \(formatVersion)"
            )
        }
        let sequence = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 6, as: UInt64.self))
        let count = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 14, as: UInt32.self)))
        var offset = headerByteCount
        var records: [RecordID: Record] = [:]
        records.reserveCapacity(count)
        for _ in 0..<count {
            guard bytes.count - offset >= 4 else { throw corrupted("the keyring records item is truncated") }
            let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            offset += 4
            guard bytes.count - offset >= length else { throw corrupted("the keyring records item is truncated") }
            let opened = try sealer.open(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)]))
            offset += length
            guard opened.sequence == sequence, case .put(let record) = opened.change, records[record.id] == nil else {
                throw corrupted("the keyring records item holds a record that does not belong to it")
            }
            records[record.id] = record
        }
        let marker = UnsafeRawBufferPointer(rebasing: bytes[offset...])
        guard sealer.openMarker(marker, context: "STKS", associatedData: header(sequence: sequence, count: count)) else {
            throw corrupted("the keyring records item failed to authenticate (damaged, truncated, or sealed with another key)")
        }
        return KeyringSnapshot(sequence: sequence, records: records)
    }

    private static func header(sequence: UInt64, count: Int) -> [UInt8] {
        var header = magic
        RecordSealer.appendLE(formatVersion, to: &header)
        RecordSealer.appendLE(sequence, to: &header)
        RecordSealer.appendLE(UInt32(count), to: &header)
        return header
    }

    private static func corrupted(_ message: String) -> TokenCacheError {
        TokenCacheError(.storeCorrupted, message)
    }
}
