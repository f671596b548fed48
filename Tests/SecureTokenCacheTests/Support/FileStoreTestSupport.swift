import Foundation
import Testing

@testable import SecureTokenCache

/// A temporary directory removed when the value goes away.
final class TemporaryDirectory: @unchecked Sendable {
    let path: String

    /// A new directory in `parent` (the system's temporary directory by default).
    init(in parent: String = NSTemporaryDirectory()) {
        var template = Array(((parent.hasSuffix("/") ? parent : parent + "/") + "stc-test-XXXXXX").utf8CString)
        let result = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(result != nil, "mkdtemp failed")
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        _ = chmodRecursively(path)
        try? FileManager.default.removeItem(atPath: path)
    }

    private func chmodRecursively(_ path: String) -> Bool {
        chmod(path, 0o700)
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
            var isDirectory: ObjCBool = false
            let child = path + "/" + entry
            if FileManager.default.fileExists(atPath: child, isDirectory: &isDirectory), isDirectory.boolValue {
                _ = chmodRecursively(child)
            }
        }
        return true
    }
}

/// Fast keys for tests (Argon2id at its minimum limits).
func testPassphrase(_ passphrase: String = "correct horse battery staple") -> any KeyProvider {
    try! PassphraseKeyProvider(passphrase: passphrase, parameters: .minimum)
}

func put(_ name: String, _ payload: String, kind: RecordKind = .accessToken) -> RecordChange {
    .put(Record(id: RecordID(kind: kind, name: name), payload: Array(payload.utf8)))
}

func delete(_ name: String, kind: RecordKind = .accessToken) -> RecordChange {
    .delete(RecordID(kind: kind, name: name))
}

/// A group's records as name → payload text (for comparisons).
func contents(_ records: [Record]) -> [String: String] {
    var result: [String: String] = [:]
    for record in records {
        let key = "\(record.id.kind.rawValue):\(record.id.name)"
        precondition(result[key] == nil, "duplicate record \(key)")
        result[key] = String(decoding: record.payload, as: UTF8.self)
    }
    return result
}

/// Applies an update to a name → payload snapshot.
func apply(_ update: StoreUpdate, to snapshot: inout [String: String]) {
    switch update {
    case .unchanged: break
    case .changes(let changes, _):
        for change in changes {
            let key = "\(change.id.kind.rawValue):\(change.id.name)"
            switch change {
            case .put(let record): snapshot[key] = String(decoding: record.payload, as: UTF8.self)
            case .delete: snapshot[key] = nil
            }
        }
    case .reload(let records, _): snapshot = contents(records)
    }
}

extension FileStore {
    /// Commits `changes` as one transaction, ignoring what others changed.
    @discardableResult
    func commit(_ changes: [RecordChange], since cursor: StoreCursor = .start) throws -> StoreCursor {
        try transact(since: cursor) { _ in changes }
    }
}

/// Every regular file under `path`, recursively.
func allFiles(under path: String) -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: path) else { return [] }
    var files: [String] = []
    while let entry = enumerator.nextObject() as? String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path + "/" + entry, isDirectory: &isDirectory), !isDirectory.boolValue {
            files.append(path + "/" + entry)
        }
    }
    return files.sorted()
}

func readBytes(_ path: String) -> [UInt8] {
    (try? Array(Data(contentsOf: URL(fileURLWithPath: path)))) ?? []
}

/// Overwrites a file in place (never shrinking it below `bytes.count` on the way, so a state file
/// another instance still maps is never briefly empty).
func writeBytes(_ bytes: [UInt8], to path: String) {
    let fd = open(path, O_WRONLY)
    precondition(fd >= 0, "open \(path) failed")
    bytes.withUnsafeBytes { _ = pwrite(fd, $0.baseAddress, $0.count, 0) }
    ftruncate(fd, off_t(bytes.count))
    close(fd)
}

/// One frame of a log file, as ``logFrames(_:)`` finds it.
struct LogFrame: Equatable {
    /// Its type byte (``LogFormat/batchFrame`` or ``LogFormat/commitFrame``).
    var type: UInt8
    /// A batch frame's first sequence number, or a commit frame's sequence.
    var sequence: UInt64
    /// A batch frame's or a commit frame's record count.
    var count: Int
    /// Where it starts in the file.
    var offset: Int
}

/// The frames of a log file (its bytes, header included), by their lengths; no box is opened.
func logFrames(_ log: [UInt8]) -> [LogFrame] {
    var frames: [LogFrame] = []
    var offset = LogFormat.headerByteCount
    log.withUnsafeBytes { bytes in
        while bytes.count - offset >= 5 {
            let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            guard length >= 1, offset + 4 + length <= bytes.count else { break }
            let body = offset + 5
            // Batch and commit frames both start with a sequence number and a record count.
            frames.append(
                LogFrame(
                    type: bytes[offset + 4],
                    sequence: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: body, as: UInt64.self)),
                    count: Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: body + 8, as: UInt32.self))),
                    offset: offset))
            offset += 4 + length
        }
    }
    return frames
}

/// Checks that the sequence numbers in `frames` grow strictly: a batch's records take
/// consecutive numbers, and each commit the number after its transaction's last record.
func sequencesGrowStrictly(_ frames: [LogFrame]) -> Bool {
    var last: UInt64 = 0
    for frame in frames {
        guard frame.sequence > last else { return false }
        last = frame.type == LogFormat.batchFrame ? frame.sequence + UInt64(frame.count) - 1 : frame.sequence
    }
    return true
}
