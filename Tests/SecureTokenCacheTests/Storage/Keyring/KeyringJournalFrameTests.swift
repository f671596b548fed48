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

    /// A committed transaction's frames, read back from a copy (``KeyringLastCommit``), give
    /// exactly its changes and the journal position after it; anything but exactly the next
    /// transaction, complete, gives nothing.
    @Test func aCopyOfTheNextTransactionGivesItsChangesAndNothingElseDoes() throws {
        let journal = try journal()
        let first = [put("a", "1"), put("b", "2", kind: .refreshToken)]
        let second = [delete("a"), put("c", "3")]
        let pendingFirst = try #require(try journal.begin(first, generation: 1, appendingTo: nil, at: nil))
        let committedFirst = try #require(journal.commit(pendingFirst))
        let file = try #require(journal.openForWriting())
        let pending = try #require(try journal.begin(second, generation: 2, appendingTo: file, at: committedFirst.end))
        let committed = try #require(journal.commit(pending))
        #expect(committed.start == committedFirst.end)
        #expect(committed.end == UInt64(readBytes(journal.path).count))

        let found = try #require(journal.changes(inCopy: committed.frames, at: committed.start, after: 1))
        #expect(KeyringTestSupport.describe(found.changes) == KeyringTestSupport.describe(second))
        #expect(found.position == committed.end)
        // Read as the wrong generation's successor, cut short, with more after it, or as two
        // transactions at once: nothing.
        #expect(journal.changes(inCopy: committed.frames, at: committed.start, after: 0) == nil)
        #expect(journal.changes(inCopy: committed.frames, at: committed.start, after: 2) == nil)
        #expect(journal.changes(inCopy: Array(committed.frames.dropLast()), at: committed.start, after: 1) == nil)
        #expect(journal.changes(inCopy: committed.frames + [0, 0, 0, 0, 0], at: committed.start, after: 1) == nil)
        #expect(journal.changes(inCopy: committedFirst.frames + committed.frames, at: committedFirst.start, after: 0) == nil)
        // Another group's key opens nothing.
        let stranger = KeyringJournal(
            directory: try GroupDirectory.madeKeyring("journal-frames-other", root: runtime.path),
            sealer: try RecordSealer(groupKey: SecretKey(), groupName: "journal-frames"))
        #expect(stranger.changes(inCopy: committed.frames, at: committed.start, after: 1) == nil)
    }

    /// The mapped copy hands back exactly what was published, in a second mapping of the file as
    /// another process would have; an unpublished, withdrawn or too large transaction leaves none.
    @Test func theCopyHandsBackWhatWasPublished() throws {
        let directory = try GroupDirectory.madeKeyring("journal-frames", root: runtime.path)
        let writer = try #require(KeyringLastCommit(directory: directory))
        let reader = try #require(KeyringLastCommit(directory: directory))
        #expect(reader.read() == nil)
        let frames = (0..<1700).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        writer.publish(KeyringJournal.Committed(start: 802_021, frames: frames))
        let copy = try #require(reader.read())
        #expect(copy.frames == frames)
        #expect(copy.start == 802_021)
        writer.publish(KeyringJournal.Committed(start: 16, frames: [1, 2, 3]))
        #expect(reader.read()?.frames == [1, 2, 3])
        writer.publish(nil)
        #expect(reader.read() == nil)
        writer.publish(KeyringJournal.Committed(start: 16, frames: [UInt8](repeating: 7, count: KeyringLastCommit.capacity + 1)))
        #expect(reader.read() == nil)
        writer.publish(KeyringJournal.Committed(start: 16, frames: [UInt8](repeating: 7, count: KeyringLastCommit.capacity)))
        #expect(reader.read()?.frames.count == KeyringLastCommit.capacity)
    }

    /// A journal frame of an unknown type ends what the journal can tell, in the file and in the
    /// mapped copy alike: readers get the transactions before it and nothing from it on, so they
    /// read the records item instead.
    @Test func aFrameOfAnUnknownTypeIsNeverTrusted() throws {
        let journal = try journal()
        let pending = try #require(try journal.begin([put("a", "1")], generation: 1, appendingTo: nil, at: nil))
        let end = try #require(journal.commit(pending)).end
        let writer = try #require(journal.openForWriting())
        let next = try #require(try journal.begin([put("b", "2")], generation: 2, appendingTo: writer, at: end))
        let committed = try #require(journal.commit(next))
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

            var copy = committed.frames
            copy[4] = type
            #expect(journal.changes(inCopy: copy, at: committed.start, after: 1) == nil, "type \(type)")
        }
    }
}
