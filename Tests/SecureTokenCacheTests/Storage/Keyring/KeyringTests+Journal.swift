import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

extension KeyringTests {
    /// The KeyringStore's sealed change journal: another writer's commit arrives as exactly its
    /// changes without a D-Bus read, and whenever the journal cannot tell, the records item is
    /// read instead, with the right content and no error.
    @Suite struct Journal {
        typealias Support = KeyringTestSupport

        /// The journal file of `group` in its keyring group folder.
        static func journalPath(_ group: String) throws -> String {
            try GroupDirectory.madeKeyring(group).file(KeyringJournal.fileName)
        }

        /// The whole journal file of `group`.
        static func journalBytes(_ group: String) throws -> [UInt8] {
            Array(try Data(contentsOf: URL(fileURLWithPath: try journalPath(group))))
        }

        /// Replaces the content of the file at `path` in place (same file, same mode).
        static func overwrite(_ path: String, with bytes: [UInt8]) throws {
            let fd = open(path, O_WRONLY | O_TRUNC)
            try #require(fd >= 0, "cannot open \(path)")
            defer { close(fd) }
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            try #require(written == bytes.count)
        }

        /// The generation the journal of `group` starts after (its header's base).
        static func journalBase(_ group: String) throws -> UInt64? {
            KeyringJournal.base(ofHeader: Array(try journalBytes(group).prefix(KeyringJournal.headerByteCount)))
        }

        @Test func anotherStoresCommitArrivesAsExactlyItsChanges() throws {
            let group = Support.uniqueGroup("journal")
            let writer = try KeyringStore(group: group)
            let first = try writer.transact(since: .start) { _ in
                [.put(Support.record("a", "1")), .put(Support.record("b", "2"))]
            }
            let reader = try KeyringStore(group: group)
            let (records, cursor) = try reader.load()
            #expect(Support.payloads(records) == ["a": "1", "b": "2"])
            let (readerReads, writerReads) = (reader.itemReads, writer.itemReads)

            let second = try writer.transact(since: first) { transaction in
                guard case .unchanged = transaction.update else {
                    Issue.record("the writer is up to date: \(transaction.update)")
                    return []
                }
                return [.put(Support.record("c", "3")), .delete(RecordID(kind: .accessToken, name: "a"))]
            }
            #expect(second.generation == 2)
            // The writer started from its own state, which the journal said is current.
            #expect(writer.itemReads == writerReads)

            guard case .changes(let changes, let next) = try reader.update(since: cursor) else {
                Issue.record("a reader one commit behind catches up from the journal")
                return
            }
            #expect(Support.describe(changes) == ["put c=3", "delete a"])
            #expect(next == second)
            guard case .unchanged = try reader.update(since: next) else {
                Issue.record("nothing changed since")
                return
            }

            // The reader's own write starts from its state and the journal too, and hands its
            // body what it has not seen as changes.
            let third = try reader.transact(since: cursor) { transaction in
                guard case .changes(let missed, _) = transaction.update else {
                    Issue.record("a writer one commit behind gets the changes: \(transaction.update)")
                    return []
                }
                #expect(Support.describe(missed) == ["put c=3", "delete a"])
                return [.put(Support.record("d", "4"))]
            }
            #expect(third.generation == 3)
            #expect(reader.itemReads == readerReads)
            guard case .changes(let fromReader, _) = try writer.update(since: second) else {
                Issue.record("the writer catches up from the journal")
                return
            }
            #expect(Support.describe(fromReader) == ["put d=4"])
            #expect(writer.itemReads == writerReads)
            #expect(try Support.payloads(KeyringStore(group: group).load().0) == ["b": "2", "c": "3", "d": "4"])
        }

        /// Through the engine: a lookup after another group's write finds the new token, and the
        /// reader never reads the keyring item for it.
        @Test func aLookupAfterAnotherGroupsWriteSeesTheNewToken() throws {
            let group = Support.uniqueGroup("journal-engine")
            let writerStore = try KeyringStore(group: group)
            let readerStore = try KeyringStore(group: group)
            let writer = try TokenCache(clientId: Fixtures.clientA, group: CacheGroup(name: group, store: writerStore))
            let reader = try TokenCache(clientId: Fixtures.clientA, group: CacheGroup(name: group, store: readerStore))
            let reads = readerStore.itemReads

            try writer.store(try Fixtures.response(), for: try Fixtures.request())
            let account = try #require(try reader.accounts().first)
            #expect(try reader.accessToken(for: ["User.Read"], account: account)?.token.secret == "at-secret")
            try writer.store(
                try Fixtures.response(accessToken: "at-mail", scope: "Mail.Read"),
                for: try Fixtures.request(scopes: ["Mail.Read"]))
            #expect(try reader.accessToken(for: ["Mail.Read"], account: account)?.token.secret == "at-mail")
            try writer.signOut(account)
            #expect(try reader.accessToken(for: ["Mail.Read"], account: account) == nil)
            #expect(readerStore.itemReads == reads)
        }

        /// Ways a journal can fail to tell a reader what happened.
        enum Damage: String, CaseIterable, CustomTestStringConvertible {
            case deleted
            case truncatedMidFrame
            case flippedByte
            case staleCopy
            case otherGroupsJournal
            case garbage
            case rotated

            var testDescription: String { rawValue }
        }

        @Test(arguments: Damage.allCases)
        func aJournalThatCannotTellFallsBackToTheItem(_ damage: Damage) throws {
            let group = Support.uniqueGroup("journal-\(damage.rawValue.lowercased())")
            let path = try Self.journalPath(group)
            let writer = try KeyringStore(group: group)
            // A reader that opened the group before it had a journal: it has no journal file
            // open that could still hold what the damage took away.
            let reader = try KeyringStore(group: group)
            let (_, cursor) = try reader.load()
            let first = try writer.transact(since: .start) { _ in
                [.put(Support.record("a", "1")), .put(Support.record("b", "2"))]
            }
            let older = try Self.journalBytes(group)
            let second = try writer.transact(since: first) { _ in
                [.put(Support.record("c", "3")), .delete(RecordID(kind: .accessToken, name: "a"))]
            }

            switch damage {
            case .deleted:
                #expect(unlink(path) == 0)
            case .truncatedMidFrame:
                #expect(truncate(path, off_t(second.position) - 20) == 0)
            case .flippedByte:
                // Inside the sealed box of the second transaction's first record.
                var bytes = try Self.journalBytes(group)
                bytes[Int(first.position) + 40] ^= 0x01
                try Self.overwrite(path, with: bytes)
            case .staleCopy:
                try Self.overwrite(path, with: older)
            case .otherGroupsJournal:
                // A journal of the same shape, sealed for another group.
                let other = Support.uniqueGroup("journal-other")
                let otherStore = try KeyringStore(group: other)
                let otherFirst = try otherStore.transact(since: .start) { _ in
                    [.put(Support.record("a", "1")), .put(Support.record("b", "2"))]
                }
                _ = try otherStore.transact(since: otherFirst) { _ in
                    [.put(Support.record("c", "3")), .delete(RecordID(kind: .accessToken, name: "a"))]
                }
                try Self.overwrite(path, with: try Self.journalBytes(other))
            case .garbage:
                try Self.overwrite(path, with: (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            case .rotated:
                // What a writer's rotation leaves: a new file starting after generation 2,
                // renamed over the old one.
                let fresh = path + ".test"
                let fd = creat(fresh, 0o600)
                try #require(fd >= 0)
                close(fd)
                try Self.overwrite(fresh, with: KeyringJournal.header(base: 2))
                #expect(rename(fresh, path) == 0)
            }

            let reads = reader.itemReads
            let update = try reader.update(since: cursor)
            guard case .reload(let records, let next) = update else {
                Issue.record("a journal that cannot tell means reading the item, got \(update)")
                return
            }
            #expect(Support.payloads(records) == ["b": "2", "c": "3"])
            #expect(next.generation == 2)
            #expect(reader.itemReads == reads + 1)

            // The next commit puts things right: the reader catches up from the journal again.
            let third = try writer.transact(since: second) { _ in [.put(Support.record("d", "4"))] }
            guard case .changes(let changes, let after) = try reader.update(since: next) else {
                Issue.record("after the next commit the journal serves the reader again")
                return
            }
            #expect(Support.describe(changes) == ["put d=4"])
            #expect(after.generation == third.generation)
            #expect(reader.itemReads == reads + 1)
            #expect(try Support.payloads(KeyringStore(group: group).load().0) == ["b": "2", "c": "3", "d": "4"])
        }

        /// A writer whose known state the journal cannot bring up to date reads the item.
        @Test func aWriterFallsBackToTheItemWhenTheJournalIsGone() throws {
            let group = Support.uniqueGroup("journal-writer")
            let writer = try KeyringStore(group: group)
            let first = try writer.transact(since: .start) { _ in [.put(Support.record("a", "1"))] }
            let other = try KeyringStore(group: group)
            _ = try other.transact(since: .start) { _ in [.put(Support.record("b", "2"))] }
            #expect(unlink(try Self.journalPath(group)) == 0)
            let reads = writer.itemReads
            _ = try writer.transact(since: first) { transaction in
                var content = ["a": "1"]
                Support.apply(transaction.update, to: &content)
                #expect(content == ["a": "1", "b": "2"])
                return [.put(Support.record("c", "3"))]
            }
            #expect(writer.itemReads == reads + 1)
            #expect(try Support.payloads(other.load().0) == ["a": "1", "b": "2", "c": "3"])
        }

        /// A writer that died between its batch frames and its commit frame, before or after
        /// storing the item: readers apply only complete transactions, and the next writer reads
        /// the item instead of trusting the journal.
        @Test(arguments: [false, true])
        func aWriterThatDiedHalfWayIsNeverTrusted(_ itemStored: Bool) throws {
            let group = Support.uniqueGroup("journal-dead-writer")
            let writer = try KeyringStore(group: group)
            let reader = try KeyringStore(group: group)
            var (_, cursor) = try reader.load()
            var content: [String: String] = [:]
            let first = try writer.transact(since: .start) { _ in [.put(Support.record("a", "1"))] }

            // The dead writer, by hand: its batch frames, perhaps the item, then nothing.
            let directory = try GroupDirectory.madeKeyring(group)
            let client = KeyringClient(schema: .group)
            let key = try KeyringKeyProvider(
                group: group, client: client, lock: FileLock(path: directory.file("lock"), purpose: "the group"),
                lockTimeout: .seconds(10)
            ).groupKey()
            let sealer = try RecordSealer(groupKey: key, groupName: group)
            let journal = KeyringJournal(directory: directory, sealer: sealer)
            let file = try #require(journal.openForWriting())
            let end = try #require(journal.appendPosition(in: file, after: 1))
            _ = try #require(try journal.begin([.put(Support.record("b", "dead"))], generation: 2, appendingTo: file, at: end))
            if itemStored {
                let snapshot = KeyringSnapshot(
                    sequence: 2,
                    records: [
                        RecordID(kind: .accessToken, name: "a"): Support.record("a", "1"),
                        RecordID(kind: .accessToken, name: "b"): Support.record("b", "dead"),
                    ])
                try snapshot.sealed(with: sealer).withUnsafeBytes {
                    try client.store(
                        $0, label: "SecureTokenCache sealed records (\(group))", attributes: ["group": group, "role": "records"])
                }
            }

            // Readers see generation 1 only: the counter says so, and nothing else is complete.
            let update = try reader.update(since: cursor)
            guard case .changes(let changes, let next) = update else {
                Issue.record("the reader catches up with generation 1 from the journal, got \(update)")
                return
            }
            #expect(Support.describe(changes) == ["put a=1"])
            Support.apply(update, to: &content)
            cursor = next

            let reads = writer.itemReads
            let written = try writer.transact(since: first) { transaction in
                var seen = ["a": "1"]
                Support.apply(transaction.update, to: &seen)
                #expect(seen == (itemStored ? ["a": "1", "b": "dead"] : ["a": "1"]))
                return [.put(Support.record("c", "3"))]
            }
            #expect(writer.itemReads == reads + 1)
            #expect(written.generation == (itemStored ? 3 : 2))

            Support.apply(try reader.update(since: cursor), to: &content)
            let expected = itemStored ? ["a": "1", "b": "dead", "c": "3"] : ["a": "1", "c": "3"]
            #expect(content == expected)
            #expect(try Support.payloads(KeyringStore(group: group).load().0) == expected)
        }

        /// Past the size bound each write may start a new journal; readers stay correct at every
        /// step, and one that keeps up never needs the item (a new journal starts at its
        /// generation).
        @Test func rotationKeepsEveryReaderCorrect() throws {
            let group = Support.uniqueGroup("journal-rotation")
            let limit = 4096
            let writer = try KeyringStore(group: group, journalSizeLimit: limit)
            let readers = try (0..<3).map { _ in try KeyringStore(group: group) }
            var cursors = try readers.map { try $0.load().1 }
            var contents = [[String: String]](repeating: [:], count: readers.count)
            var truth: [String: String] = [:]
            var cursor = StoreCursor.start
            var bases = Set<UInt64>()
            let keepingUpReads = readers[0].itemReads
            for i in 0..<40 {
                var changes: [RecordChange] = [.put(Support.record("t\(i % 7)", "\(i)-" + String(repeating: "x", count: 300)))]
                if i % 5 == 4 { changes.append(.delete(RecordID(kind: .accessToken, name: "t\((i + 3) % 7)"))) }
                cursor = try writer.transact(since: cursor) { _ in changes }
                Support.apply(.changes(changes, cursor), to: &truth)
                bases.insert(try #require(try Self.journalBase(group)))
                #expect(try Self.journalBytes(group).count <= limit + 2048)
                // Reader 0 after every write, reader 1 after every third, reader 2 at the end.
                for (index, step) in [(0, 1), (1, 3)] where i % step == 0 {
                    let update = try readers[index].update(since: cursors[index])
                    Support.apply(update, to: &contents[index])
                    cursors[index] = update.cursor
                    #expect(contents[index] == truth, "reader \(index) after write \(i)")
                }
            }
            for index in readers.indices {
                let update = try readers[index].update(since: cursors[index])
                Support.apply(update, to: &contents[index])
                #expect(contents[index] == truth, "reader \(index) at the end")
            }
            #expect(bases.count > 3, "the journal should have been started anew several times: \(bases.sorted())")
            #expect(readers[0].itemReads == keepingUpReads)
            #expect(try Support.payloads(KeyringStore(group: group).load().0) == truth)
        }

        /// Two processes writing at once, and a reader catching up all along: it ends with
        /// exactly the item's content.
        @Test(.tags(.multiProcess)) func interleavedWritersInTwoProcessesAgreeWithTheItem() async throws {
            let group = Support.uniqueGroup("journal-processes")
            let path = Support.helperPath
            try #require(FileManager.default.isExecutableFile(atPath: path))
            let writer = try KeyringStore(group: group, journalSizeLimit: 8192)
            let reader = try KeyringStore(group: group)
            var (records, cursor) = try reader.load()
            var content = Support.payloads(records)
            let count = 30
            let helper = Task.detached { try Support.run(path, ["churn", group, "helper", "\(count)"]) }
            var writerCursor = StoreCursor.start
            var journalUpdates = 0
            for i in 0..<count {
                var changes: [RecordChange] = [.put(Support.record("parent-\(i)", "v\(i)"))]
                if i >= 2 { changes.append(.delete(RecordID(kind: .accessToken, name: "parent-\(i - 2)"))) }
                writerCursor = try writer.transact(since: writerCursor) { _ in changes }
                let update = try reader.update(since: cursor)
                if case .changes = update { journalUpdates += 1 }
                Support.apply(update, to: &content)
                cursor = update.cursor
            }
            let output = try await helper.value
            #expect(output.status == 0, "\(output.stdout) \(output.stderr)")
            let update = try reader.update(since: cursor)
            Support.apply(update, to: &content)
            (records, _) = try KeyringStore(group: group).load()
            let expected = Support.payloads(records)
            #expect(
                expected == [
                    "parent-\(count - 2)": "v\(count - 2)", "parent-\(count - 1)": "v\(count - 1)",
                    "helper-\(count - 2)": "v\(count - 2)", "helper-\(count - 1)": "v\(count - 1)",
                ])
            #expect(content == expected)
            #expect(update.cursor.generation == UInt64(2 * count))
            #expect(journalUpdates > 0)
        }

        /// The journal is a 0600 file in the 0700 coordination folder, and holds no plaintext.
        @Test func theJournalIsPrivateAndSealed() throws {
            let group = Support.uniqueGroup("journal-hygiene")
            let store = try KeyringStore(group: group)
            let name = "alice@contoso.example-accesstoken"
            let secret = "secret-access-token-\(UUID().uuidString)"
            _ = try store.transact(since: .start) { _ in [.put(Support.record(name, secret))] }
            let directory = try GroupDirectory.madeKeyring(group)
            var info = stat()
            #expect(lstat(directory.path, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o700)
            for file in [KeyringJournal.fileName] {
                let path = directory.file(file)
                #expect(lstat(path, &info) == 0)
                #expect(info.st_mode & S_IFMT == S_IFREG)
                #expect(info.st_mode & 0o777 == 0o600)
                #expect(info.st_uid == geteuid())
                let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
                #expect(bytes.contains { $0 != 0 }, "\(file) holds the transaction")
                for plaintext in [secret, name, "alice", "secret-access-token"] {
                    let needle = Array(plaintext.utf8)
                    let found = bytes.indices.dropLast(needle.count - 1).contains {
                        bytes[$0..<($0 + needle.count)].elementsEqual(needle)
                    }
                    #expect(!found, "\(file) holds \(plaintext) in plaintext")
                }
            }
        }
    }
}
