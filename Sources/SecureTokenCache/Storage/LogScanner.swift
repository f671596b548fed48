/// Reads frames out of a log, opening every record once and checking the commit chain.
struct LogScanner {
    /// The sealer of the group.
    let sealer: RecordSealer
    /// The largest sequence number seen so far.
    var lastSequence: UInt64
    /// The sequence number of the last commit frame seen (0 at the start of a log).
    var lastCommit: UInt64

    /// Scans `bytes`, which start at file offset `base`.
    ///
    /// In strict mode (committed data) the bytes must be exactly a run of complete, valid
    /// transactions; anything else throws ``TokenCacheError/Code/storeCorrupted``. In lenient mode
    /// (the uncommitted tail past the published length) scanning stops quietly at the first
    /// incomplete or invalid frame, which is a torn append. Returns the complete transactions and
    /// the offset after the last one.
    mutating func scan(_ bytes: UnsafeRawBufferPointer, base: UInt64, lenient: Bool) throws -> [ScannedTransaction] {
        var transactions: [ScannedTransaction] = []
        var pending: [ScannedRecord] = []
        var pendingStart = 0
        var sequence = lastSequence
        var offset = 0
        var buffers = RecordSealer.OpeningBuffers()
        defer { buffers.wipe() }
        func fail(_ message: String) -> TokenCacheError {
            TokenCacheError(.storeCorrupted, "the group's log is damaged at byte \(base + UInt64(offset)): \(message)")
        }
        while offset < bytes.count {
            guard bytes.count - offset >= 5 else {
                if lenient { break }
                throw fail("a frame is cut short")
            }
            let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            guard length >= 1, length <= LogFormat.maximumFrameByteCount, length <= bytes.count - offset - 4 else {
                if lenient { break }
                throw fail("a frame has an impossible length")
            }
            let body = UnsafeRawBufferPointer(rebasing: bytes[(offset + 5)..<(offset + 4 + length)])
            switch bytes[offset + 4] {
            case LogFormat.recordFrame:
                let opened: OpenedRecord
                do { opened = try sealer.open(body, buffers: &buffers) } catch {
                    if lenient { break }
                    throw fail("a record does not open (\((error as? TokenCacheError)?.message ?? "\(error)"))")
                }
                guard opened.sequence > sequence else {
                    if lenient { break }
                    throw fail("a record is out of sequence (replayed or moved)")
                }
                if pending.isEmpty { pendingStart = offset }
                sequence = opened.sequence
                pending.append(ScannedRecord(offset: base + UInt64(offset), byteCount: length + 4, opened: opened))
                offset += 4 + length
                continue
            case LogFormat.commitFrame where length == LogFormat.commitFrameByteCount - 4:
                let commitSequence = UInt64(littleEndian: body.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
                let count = Int(UInt32(littleEndian: body.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
                let previous = UInt64(littleEndian: body.loadUnaligned(fromByteOffset: 12, as: UInt64.self))
                let digest = LogFormat.transactionDigest(
                    UnsafeRawBufferPointer(rebasing: bytes[(pending.isEmpty ? offset : pendingStart)..<offset]))
                let valid =
                    commitSequence > sequence && count == pending.count && previous == lastCommit
                    && sealer.openMarker(
                        UnsafeRawBufferPointer(rebasing: body[20...]), context: "CMIT",
                        associatedData: Array(body[0..<20]) + digest
                    )
                guard valid else {
                    if lenient { break }
                    throw fail("a commit marker does not verify (damaged, dropped or reordered transaction)")
                }
                offset += LogFormat.commitFrameByteCount
                sequence = commitSequence
                lastSequence = commitSequence
                lastCommit = commitSequence
                transactions.append(
                    ScannedTransaction(records: pending, end: base + UInt64(offset), commitSequence: commitSequence))
                pending = []
                continue
            default:
                if lenient { break }
                throw fail("a frame has an unknown type")
            }
            break  // lenient stop
        }
        if !lenient, !pending.isEmpty {
            throw TokenCacheError(.storeCorrupted, "the group's log is damaged: its committed part ends inside a transaction")
        }
        return transactions
    }
}
