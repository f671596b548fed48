import Testing

@testable import SecureTokenCache

/// The keyring journal's frames, without a Secret Service: writes are batch frames, and a journal
/// written with record frames (older versions) still tells readers what happened.
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

    @Test func aJournalOfRecordFramesIsStillRead() throws {
        let journal = try journal()
        let transactions = [[put("a", "1"), put("b", "2")], [delete("a")], [put("c", "3"), put("b", "4")]]
        var bytes = KeyringJournal.header(base: 0)
        for (index, changes) in transactions.enumerated() {
            let generation = UInt64(index + 1)
            let start = bytes.count
            for (position, change) in changes.enumerated() {
                try LogFormat.appendRecordFrame(
                    change, sequence: (generation - 1) << 32 + UInt64(position) + 1, sealer: sealer, to: &bytes)
            }
            try LogFormat.appendCommitFrame(
                sequence: generation << 32, count: changes.count, previousCommit: (generation - 1) << 32, recordsStart: start,
                sealer: sealer, to: &bytes)
        }
        try SystemCall.writeNewFile(journal.path, bytes, "writing a test journal")
        let all = try #require(journal.changes(after: 0, hint: 0, through: 3))
        #expect(KeyringTestSupport.describe(all.changes) == KeyringTestSupport.describe(transactions.flatMap { $0 }))
        let last = try #require(journal.changes(after: 2, hint: 0, through: 3))
        #expect(KeyringTestSupport.describe(last.changes) == ["put c=3", "put b=4"])
        #expect(journal.position(of: 3) == UInt64(bytes.count))
        // And a writer appends batch frames after them.
        let file = try #require(journal.openForWriting())
        let end = try #require(journal.appendPosition(in: file, after: 3))
        let pending = try #require(try journal.begin([put("d", "5")], generation: 4, appendingTo: file, at: end))
        _ = try #require(journal.commit(pending))
        let fourth = try #require(journal.changes(after: 3, hint: end, through: 4))
        #expect(KeyringTestSupport.describe(fourth.changes) == ["put d=5"])
    }
}
