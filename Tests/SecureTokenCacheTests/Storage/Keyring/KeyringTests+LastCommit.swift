import Foundation
import Testing

@testable import SecureTokenCache

extension KeyringTests {
    /// The KeyringStore's mapped copy of the newest transaction: a reader one commit behind
    /// catches up from it alone, and a copy that cannot tell (damaged, stale, torn, another
    /// group's, planted) is never trusted: the reader reads the journal, or the item.
    @Suite struct LastCommit {
        typealias Support = KeyringTestSupport

        /// The last-commit file of `group` in its keyring group folder.
        static func copyPath(_ group: String) throws -> String {
            try GroupDirectory.madeKeyring(group).file(KeyringLastCommit.fileName)
        }

        /// The whole last-commit file of `group`.
        static func copyBytes(_ group: String) throws -> [UInt8] {
            Array(try Data(contentsOf: URL(fileURLWithPath: try copyPath(group))))
        }

        /// Writes `bytes` at `offset` of the file at `path` without truncating it: the stores
        /// have it mapped, and a shorter file would fault their next access.
        static func patch(_ path: String, with bytes: [UInt8], at offset: Int = 0) throws {
            let fd = open(path, O_WRONLY)
            try #require(fd >= 0, "cannot open \(path)")
            defer { close(fd) }
            let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
            try #require(written == bytes.count)
        }

        /// The copy's word: byte count and journal position.
        static func word(_ group: String) throws -> (count: UInt64, start: UInt64) {
            let value = try copyBytes(group).withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
            return (value & (1 << 20 - 1), value >> 20)
        }

        static func setWord(_ group: String, count: UInt64, start: UInt64) throws {
            let value = (start << 20 | count).littleEndian
            try patch(try copyPath(group), with: withUnsafeBytes(of: value) { Array($0) })
        }

        @Test func aReaderOneCommitBehindCatchesUpFromTheCopyAlone() throws {
            let group = Support.uniqueGroup("last-commit")
            let writer = try KeyringStore(group: group)
            let first = try writer.transact(since: .start) { _ in [.put(Support.record("a", "1"))] }
            let reader = try KeyringStore(group: group)
            let (_, cursor) = try reader.load()
            let second = try writer.transact(since: first) { _ in
                [.put(Support.record("b", "2")), .delete(RecordID(kind: .accessToken, name: "a"))]
            }
            // Only the copy can tell the reader now. (Emptied in place, not removed: the reader
            // may hold the journal open, and a removed file stays readable through that.)
            #expect(truncate(try Journal.journalPath(group), 0) == 0)
            let reads = reader.itemReads

            let update = try reader.update(since: cursor)
            guard case .changes(let changes, let next) = update else {
                Issue.record("a reader one commit behind catches up from the copy, got \(update)")
                return
            }
            #expect(Support.describe(changes) == ["put b=2", "delete a"])
            // The cursor it ends with names where the commit ends in the journal, as the
            // writer's does.
            #expect(next == second)
            #expect(reader.itemReads == reads)
            let (count, start) = try Self.word(group)
            #expect(start == first.position)
            #expect(start + count == second.position)
        }

        /// Ways a copy can fail to tell a reader what happened.
        enum Damage: String, CaseIterable, CustomTestStringConvertible {
            case zeroed
            case flippedByte
            case staleCopy
            case otherGroupsCopy
            case countTooShort
            case countTooLong
            case garbage

            var testDescription: String { rawValue }
        }

        /// Applies `damage` to the copy of `group`; `older` is the copy as the commit before
        /// left it, `other` a copy of the same shape sealed for another group.
        static func apply(_ damage: Damage, to group: String, older: [UInt8], other: [UInt8]) throws {
            let path = try copyPath(group)
            switch damage {
            case .zeroed:
                try patch(path, with: [UInt8](repeating: 0, count: KeyringLastCommit.byteCount))
            case .flippedByte:
                var bytes = try copyBytes(group)
                bytes[KeyringLastCommit.headerByteCount + 40] ^= 0x01
                try patch(path, with: bytes)
            case .staleCopy:
                try patch(path, with: older)
            case .otherGroupsCopy:
                try patch(path, with: other)
            case .countTooShort:
                let (count, start) = try word(group)
                try setWord(group, count: count - 20, start: start)
            case .countTooLong:
                let (count, start) = try word(group)
                try setWord(group, count: count + 100, start: start)
            case .garbage:
                try patch(path, with: (0..<KeyringLastCommit.byteCount).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
            }
        }

        @Test(arguments: Damage.allCases)
        func aCopyThatCannotTellFallsBackToTheJournalAndTheItem(_ damage: Damage) throws {
            let group = Support.uniqueGroup("last-commit-\(damage.rawValue.lowercased())")
            let writer = try KeyringStore(group: group)
            let reader = try KeyringStore(group: group)
            let first = try writer.transact(since: .start) { _ in
                [.put(Support.record("a", "1")), .put(Support.record("b", "2"))]
            }
            var (_, cursor) = try reader.load()
            let older = try Self.copyBytes(group)
            // The same two commits in another group, for a copy that looks right but is not ours.
            let otherGroup = Support.uniqueGroup("last-commit-other")
            let otherStore = try KeyringStore(group: otherGroup)
            let otherFirst = try otherStore.transact(since: .start) { _ in
                [.put(Support.record("a", "1")), .put(Support.record("b", "2"))]
            }
            _ = try otherStore.transact(since: otherFirst) { _ in
                [.put(Support.record("c", "3")), .delete(RecordID(kind: .accessToken, name: "a"))]
            }
            let other = try Self.copyBytes(otherGroup)
            let reads = reader.itemReads

            // With the journal there, the reader gets the commit's changes from it.
            let second = try writer.transact(since: first) { _ in
                [.put(Support.record("c", "3")), .delete(RecordID(kind: .accessToken, name: "a"))]
            }
            try Self.apply(damage, to: group, older: older, other: other)
            let update = try reader.update(since: cursor)
            guard case .changes(let changes, let next) = update else {
                Issue.record("with the journal intact the reader catches up from it, got \(update)")
                return
            }
            #expect(Support.describe(changes) == ["put c=3", "delete a"])
            #expect(next == second)
            #expect(reader.itemReads == reads)
            cursor = next

            // With the journal emptied too, only the item can tell: the reader reads it, with the
            // right content, never the damaged copy's.
            let beforeThird = try Self.copyBytes(group)
            _ = try writer.transact(since: second) { _ in [.put(Support.record("d", "4"))] }
            try Self.apply(damage, to: group, older: beforeThird, other: other)
            #expect(truncate(try Journal.journalPath(group), 0) == 0)
            let fallback = try reader.update(since: cursor)
            guard case .reload(let records, let last) = fallback else {
                Issue.record("with neither the copy nor the journal telling, the reader reads the item, got \(fallback)")
                return
            }
            #expect(Support.payloads(records) == ["b": "2", "c": "3", "d": "4"])
            #expect(last.generation == 3)
            #expect(reader.itemReads == reads + 1)
        }

        /// A file planted where the copy goes (a link to a file of the attacker's choosing) is
        /// neither followed nor written; the group works without a copy.
        @Test func aPlantedLinkIsNotUsed() throws {
            let group = Support.uniqueGroup("last-commit-planted")
            let directory = try GroupDirectory.madeKeyring(group)
            let target = directory.path + "-planted-target"
            let planted = Array("planted".utf8)
            #expect(FileManager.default.createFile(atPath: target, contents: Data(planted)))
            defer { unlink(target) }
            #expect(symlink(target, try Self.copyPath(group)) == 0)

            let writer = try KeyringStore(group: group)
            let reader = try KeyringStore(group: group)
            let (_, cursor) = try reader.load()
            _ = try writer.transact(since: .start) { _ in [.put(Support.record("a", "1"))] }
            let reads = reader.itemReads
            guard case .changes(let changes, _) = try reader.update(since: cursor) else {
                Issue.record("the reader catches up from the journal")
                return
            }
            #expect(Support.describe(changes) == ["put a=1"])
            #expect(reader.itemReads == reads)
            #expect(Array(try Data(contentsOf: URL(fileURLWithPath: target))) == planted)
        }
    }
}
