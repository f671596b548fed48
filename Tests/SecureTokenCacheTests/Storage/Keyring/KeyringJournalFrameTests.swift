import Testing

@testable import SecureTokenCache

/// The keyring journal's frames, without a Secret Service: writes are batch frames, and a journal
/// holding a frame of any other type tells readers nothing past it.
@Suite(.timeLimit(.minutes(1))) struct KeyringJournalFrameTests {
    let sealer: RecordSealer
    let runtime = TemporaryDirectory()

    init() throws {
        sealer = try RecordSealer(groupKey: SecretKey(), groupName: "journal-frames")
    }

    private func journal() throws -> KeyringJournal {
        KeyringJournal(
            directory: try GroupDirectory.madeKeyring("journal-frames", root: runtime.path), sealer: sealer)
    }

    @Test func aTransactionIsWrittenAsBatchFramesAndReadBack() throws {
        let journal = try journal()
        let first = [put("a", "1"), put("b", "2", kind: .refreshToken)]
        let second = [delete("a"), put("c", "3")]
        let pending = try #require(try journal.begin(first, generation: 1, appendingTo: nil, at: nil))
        let end = try #require(journal.commit(pending)).end
        let file = try #require(journal.openForWriting())
        let next = try #require(try journal.begin(second, generation: 2, appendingTo: file, at: end))
        _ = try #require(journal.commit(next))

        let bytes = readBytes(journal.path)
        // Journal frames are log frames after a 16-byte header (logFrames skips 32: pad it).
        let frames = logFrames([UInt8](repeating: 0, count: LogFormat.headerByteCount - KeyringJournal.headerByteCount) + bytes)
        #expect(frames.map(\.type) == [LogFormat.batchFrame, LogFormat.commitFrame, LogFormat.batchFrame, LogFormat.commitFrame])
        #expect(frames.map(\.sequence) == [1, 1 << 32, 1 << 32 + 1, 2 << 32])
        let found = try #require(journal.changes(after: 0, hint: 0, through: 2))
        #expect(KeyringTestSupport.describe(found.changes) == KeyringTestSupport.describe(first + second))
        #expect(found.position == UInt64(bytes.count))
    }

    /// A journal frame of an unknown type ends what the journal can tell: readers get the
    /// transactions before it and nothing from it on, so they read the records item instead.
    @Test func aFrameOfAnUnknownTypeIsNeverTrusted() throws {
        let journal = try journal()
        let pending = try #require(try journal.begin([put("a", "1")], generation: 1, appendingTo: nil, at: nil))
        let end = try #require(journal.commit(pending)).end
        let writer = try #require(journal.openForWriting())
        let next = try #require(try journal.begin([put("b", "2")], generation: 2, appendingTo: writer, at: end))
        _ = try #require(journal.commit(next))
        let bytes = readBytes(journal.path)
        func reader() throws -> KeyringJournal.File { try #require(journal.openFile(writable: false)) }
        let whole = try #require(journal.changes(in: try reader(), after: 0, hint: 0, through: 2))
        #expect(KeyringTestSupport.describe(whole.changes) == ["put a=1", "put b=2"])

        for type: UInt8 in [0, 1, 4, 0xFF] {
            var damaged = bytes
            damaged[Int(end) + 4] = type
            writeBytes(damaged, to: journal.path)
            #expect(journal.changes(in: try reader(), after: 1, hint: end, through: 2) == nil, "type \(type)")
            #expect(journal.changes(in: try reader(), after: 0, hint: 0, through: 2) == nil, "type \(type)")
            let first = try #require(journal.changes(in: try reader(), after: 0, hint: 0, through: 1), "type \(type)")
            #expect(KeyringTestSupport.describe(first.changes) == ["put a=1"], "type \(type)")
        }
    }
}
