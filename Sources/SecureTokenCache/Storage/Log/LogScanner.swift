import Dispatch
import Glibc
import Synchronization

/// Reads frames out of a log, opening every record once and checking the commit chain.
///
/// A scan has two passes. The first walks the frames without opening any: it checks their
/// lengths, types and sequence numbers and verifies each commit frame (its marker authenticates
/// the transaction's frames through their tags). The second opens the frames of the verified
/// transactions; when they are large enough, on several threads, each taking a contiguous run of
/// frames, and the results are put back in log order.
struct LogScanner {
    /// The sealer of the group.
    let sealer: RecordSealer
    /// The largest sequence number seen so far.
    var lastSequence: UInt64
    /// The sequence number of the last commit frame seen (0 at the start of a log).
    var lastCommit: UInt64

    /// Below this many bytes of frames to open, starting threads costs more than it saves.
    static let parallelOpeningThreshold = 512 << 10
    /// Opening never uses more threads than this (nor more than the machine has processors).
    static let maximumOpeningThreads = 4

    /// A batch frame the first pass accepted: where it is and where its records start.
    private struct Frame {
        /// The offset of its length field in the scanned bytes.
        var start: Int
        /// The offset just after it.
        var end: Int
        /// Where its records start among the scan's records.
        var firstRecord: Int
    }

    /// The scanned bytes, handed to the threads that open frames: they only read them, and
    /// `concurrentPerform` returns only after every thread is done, while the caller still holds
    /// the buffer.
    private struct SharedBytes: @unchecked Sendable {
        let bytes: UnsafeRawBufferPointer
    }

    /// A transaction whose commit frame verified, before its frames are opened.
    private struct Verified {
        /// Its frames (indices into the frame list).
        var frames: Range<Int>
        /// Its records (indices into the scan's records).
        var records: Range<Int>
        /// The offset just after its commit frame in the scanned bytes.
        var end: Int
        /// Its commit sequence number.
        var commitSequence: UInt64
    }

    /// Scans `bytes`, which start at file offset `base`.
    ///
    /// In strict mode (committed data) the bytes must be exactly a run of complete, valid
    /// transactions; anything else throws ``TokenCacheError/Code/storeCorrupted``. In lenient mode
    /// (the uncommitted tail past the published length) scanning stops quietly before the first
    /// incomplete or invalid transaction, which is a torn append. Returns the complete
    /// transactions and their changes.
    mutating func scan(_ bytes: UnsafeRawBufferPointer, base: UInt64, lenient: Bool) throws -> ScannedLog {
        func damage(at offset: Int, _ message: String) -> TokenCacheError {
            TokenCacheError(.storeCorrupted, "the group's log is damaged at byte \(base + UInt64(offset)): \(message)")
        }
        var frames: [Frame] = []
        var verified: [Verified] = []
        var recordCount = 0
        var pendingFrames = 0
        var pendingRecords = 0
        var sequence = lastSequence
        var commit = lastCommit
        var offset = 0
        // First pass: structure, sequence numbers and commit markers; nothing is opened.
        walk: while offset < bytes.count {
            var problem: String? = nil
            guard bytes.count - offset >= 5 else {
                if lenient { break walk }
                throw damage(at: offset, "a frame is cut short")
            }
            let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            guard length >= 1, length <= LogFormat.maximumFrameByteCount, length <= bytes.count - offset - 4 else {
                if lenient { break walk }
                throw damage(at: offset, "a frame has an impossible length")
            }
            let end = offset + 4 + length
            let body = UnsafeRawBufferPointer(rebasing: bytes[(offset + 5)..<end])
            switch bytes[offset + 4] {
            case LogFormat.batchFrame:
                guard let (first, count) = RecordSealer.batchHeader(body) else {
                    problem = "a batch frame is malformed"
                    break
                }
                guard first > sequence else {
                    problem = "a batch is out of sequence (replayed or moved)"
                    break
                }
                frames.append(Frame(start: offset, end: end, firstRecord: recordCount))
                recordCount += count
                sequence = first + UInt64(count - 1)
            case LogFormat.commitFrame where length == LogFormat.commitFrameByteCount - 4:
                let commitSequence = UInt64(littleEndian: body.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
                let count = Int(UInt32(littleEndian: body.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
                let previous = UInt64(littleEndian: body.loadUnaligned(fromByteOffset: 12, as: UInt64.self))
                let framesStart = pendingFrames < frames.count ? frames[pendingFrames].start : offset
                let digest = LogFormat.transactionDigest(UnsafeRawBufferPointer(rebasing: bytes[framesStart..<offset]))
                let valid =
                    commitSequence > sequence && count == recordCount - pendingRecords && previous == commit
                    && sealer.openMarker(
                        UnsafeRawBufferPointer(rebasing: body[20...]), context: "CMIT",
                        associatedData: Array(body[0..<20]) + digest
                    )
                guard valid else {
                    problem = "a commit marker does not verify (damaged, dropped or reordered transaction)"
                    break
                }
                verified.append(
                    Verified(
                        frames: pendingFrames..<frames.count, records: pendingRecords..<recordCount, end: end,
                        commitSequence: commitSequence))
                pendingFrames = frames.count
                pendingRecords = recordCount
                sequence = commitSequence
                commit = commitSequence
            default:
                // No other type exists (see ``LogFormat``): damage, never a frame to skip.
                problem = "a frame has an unknown type"
            }
            if let problem {
                if lenient { break walk }
                throw damage(at: offset, problem)
            }
            offset = end
        }
        if !lenient, pendingFrames < frames.count {
            throw TokenCacheError(.storeCorrupted, "the group's log is damaged: its committed part ends inside a transaction")
        }
        guard let last = verified.last else { return .empty }
        // Second pass: open the frames of the verified transactions (not those of a torn tail).
        var opened = openFrames(frames[..<last.frames.upperBound], in: bytes, recordCount: last.records.upperBound)
        var kept = verified[...]
        if let failure = opened.failure {
            if !lenient {
                throw damage(at: frames[failure.frame].start, "a record does not open (\(failure.error.message))")
            }
            kept = verified.prefix { $0.frames.upperBound <= failure.frame }
            let records = kept.last?.records.upperBound ?? 0
            opened.log.changes.removeSubrange(records...)
            opened.log.nameHashes.removeSubrange(records...)
        }
        guard let lastKept = kept.last else { return .empty }
        lastSequence = lastKept.commitSequence
        lastCommit = lastKept.commitSequence
        opened.log.transactions = kept.map {
            ScannedTransaction(changes: $0.records, end: base + UInt64($0.end), commitSequence: $0.commitSequence)
        }
        return opened.log
    }

    /// ``scan(_:base:lenient:)`` of `bytes[start..<end]`, where `bytes` holds a log file from its
    /// first byte, so that the offsets in the result and in any error are the file's.
    mutating func scan(_ bytes: [UInt8], from start: Int, to end: Int, lenient: Bool) throws -> ScannedLog {
        guard start <= end else {
            throw TokenCacheError(.storeCorrupted, "the group's log is damaged: its committed part ends before byte \(start)")
        }
        return try bytes.withUnsafeBytes {
            try scan(UnsafeRawBufferPointer(rebasing: $0[start..<end]), base: UInt64(start), lenient: lenient)
        }
    }

    /// The changes in `frames` (and their name hashes), in order, up to the first frame that does
    /// not open (whose index is returned with its error). The result has no transactions yet.
    private func openFrames(
        _ frames: ArraySlice<Frame>, in bytes: UnsafeRawBufferPointer, recordCount: Int
    ) -> (log: ScannedLog, failure: (frame: Int, error: TokenCacheError)?) {
        let byteCount = frames.isEmpty ? 0 : frames.last!.end - frames.first!.start
        guard byteCount >= Self.parallelOpeningThreshold else { return openRun(frames, in: bytes, recordCount: recordCount) }
        let threads = min(Self.maximumOpeningThreads, Processors.online, frames.count)
        guard threads > 1 else { return openRun(frames, in: bytes, recordCount: recordCount) }
        // Contiguous runs of about equal size in bytes (the cost of opening is linear in them).
        var cuts: [Range<Int>] = []
        var runStart = frames.startIndex
        for index in frames.indices {
            let done = frames[index].end - frames.first!.start
            if done * threads >= byteCount * (cuts.count + 1) || index == frames.indices.last! {
                cuts.append(runStart..<(index + 1))
                runStart = index + 1
            }
        }
        let runs = cuts
        let shared = SharedBytes(bytes: bytes)
        let results = Mutex(
            [(log: ScannedLog, failure: (frame: Int, error: TokenCacheError)?)?](
                repeating: nil, count: runs.count))
        DispatchQueue.concurrentPerform(iterations: runs.count) { run in
            let range = runs[run]
            let records =
                (range.upperBound == frames.endIndex ? recordCount : frames[range.upperBound].firstRecord)
                - frames[range.lowerBound].firstRecord
            let result = openRun(frames[range], in: shared.bytes, recordCount: records)
            results.withLock { $0[run] = result }
        }
        var parts = results.withLock { $0.map { $0! } }
        // Up to the first run that failed (the runs after it do not count).
        let used = (parts.firstIndex { $0.failure != nil } ?? parts.count - 1) + 1
        var log = ScannedLog()
        log.changes = Self.concatenating(&parts, count: used)
        log.nameHashes.reserveCapacity(log.changes.count)
        for part in parts[..<used] { log.nameHashes += part.log.nameHashes }
        return (log, parts[used - 1].failure)
    }

    /// The changes of the first `count` parts in one array, moved rather than copied: a copy
    /// retains (and the parts' release then releases) a name and a payload per record, which on
    /// a large log cost more than a millisecond. The moved-from slots get a placeholder that
    /// owns nothing, so the parts stay valid arrays.
    private static func concatenating(
        _ parts: inout [(log: ScannedLog, failure: (frame: Int, error: TokenCacheError)?)], count: Int
    ) -> [RecordChange] {
        var total = 0
        for part in parts[..<count] { total += part.log.changes.count }
        let placeholder = RecordChange.delete(RecordID(kind: .accessToken, name: ""))
        return [RecordChange](unsafeUninitializedCapacity: total) { buffer, initialized in
            for index in 0..<count {
                parts[index].log.changes.withUnsafeMutableBufferPointer { part in
                    guard let source = part.baseAddress else { return }
                    (buffer.baseAddress! + initialized).moveInitialize(from: source, count: part.count)
                    initialized += part.count
                    source.initialize(repeating: placeholder, count: part.count)
                }
            }
        }
    }

    /// ``openFrames(_:in:recordCount:)`` on the calling thread. `recordCount` is how many records
    /// the frames hold (to allocate once).
    private func openRun(
        _ frames: ArraySlice<Frame>, in bytes: UnsafeRawBufferPointer, recordCount: Int
    ) -> (log: ScannedLog, failure: (frame: Int, error: TokenCacheError)?) {
        var log = ScannedLog()
        log.changes.reserveCapacity(recordCount)
        log.nameHashes.reserveCapacity(recordCount)
        var buffers = RecordSealer.OpeningBuffers()
        for index in frames.indices {
            let frame = frames[index]
            let body = UnsafeRawBufferPointer(rebasing: bytes[(frame.start + 5)..<frame.end])
            do {
                _ = try sealer.openBatch(body, buffers: &buffers, appendingTo: &log.changes, nameHashes: &log.nameHashes)
            } catch {
                let failure = error as? TokenCacheError ?? TokenCacheError(.storeCorrupted, "\(error)")
                return (log, (index, failure))
            }
        }
        return (log, nil)
    }
}
