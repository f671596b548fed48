import Glibc
import Synchronization

/// A file-store group damaged on disk, then opened and loaded.
///
/// `prepare` commits a few transactions to a group with a fixed passphrase and keeps its files
/// and what it held after each commit. An input is a byte saying how many of the transactions
/// were published (acknowledged: the state's commit word names where the last of them ends; the
/// rest of the log is a writer's append that was synced but not published), then ``FuzzEdits``
/// on the header, the log and the state file.
///
/// Property, as ``FileStore`` documents it: bytes past the published length are an unfinished
/// append whose complete, authenticated transactions are kept and whose torn rest is cut, so
/// damage only there opens to exactly the transactions before the first damaged byte (all of
/// them acknowledged ones at least); damage anywhere else throws `.storeCorrupted` (or
/// `.unsupportedFormat`, `.wrongKey`) or changes nothing: never a group with fewer than the
/// acknowledged transactions, never one that was not committed.
enum FileStoreTarget {
    private struct Template {
        var files: [[UInt8]]
        /// Where the log's header ends, then each transaction.
        var ends: [Int]
        /// What the group held after each number of transactions.
        var contents: [[RecordID: [UInt8]]]
        var epoch: UInt16
        var provider: PassphraseKeyProvider
        var scratch: String
    }

    private static let template = Mutex<Template?>(nil)
    private static let fileNames = ["header", "log", "state"]

    private static func record(_ kind: RecordKind, _ name: String, _ payload: String) -> RecordChange {
        .put(Record(id: RecordID(kind: kind, name: name), payload: Array(payload.utf8)))
    }

    static func prepare() {
        do {
            let provider = try PassphraseKeyProvider(passphrase: "fuzz", parameters: .minimum)
            let root = FuzzScratch.folder("file-store")
            let store = try FileStore(group: "fuzz", keyProvider: provider, root: root, compactionMinimumDead: 1_000)
            let transactions: [[RecordChange]] = [
                [record(.accessToken, "at-1", "token one"), record(.refreshToken, "rt-1", "refresh one")],
                [record(.accessToken, "at-1", "token one, renewed"), record(.account, "acct", "account")],
                [.delete(RecordID(kind: .refreshToken, name: "rt-1")), record(.accessToken, "at-2", "token two")],
                [record(.idToken, "id-1", String(repeating: "a long id token ", count: 64))],
            ]
            let log = root + "/fuzz/log"
            var ends = [FuzzScratch.read(log).count]
            var contents = [records(try store.load().0)]
            for changes in transactions {
                _ = try store.transact(since: .start) { _ in changes }
                ends.append(FuzzScratch.read(log).count)
                contents.append(records(try store.load().0))
            }
            let files = fileNames.map { FuzzScratch.read(root + "/fuzz/" + $0) }
            let epoch = UInt16(files[1][8]) | UInt16(files[1][9]) << 8
            template.withLock {
                $0 = Template(
                    files: files, ends: ends, contents: contents, epoch: epoch, provider: provider, scratch: root + "/open")
            }
        } catch {
            fatalError("cannot build the file-store template: \(error)")
        }
    }

    static func check(_ input: [UInt8]) {
        guard let template = template.withLock({ $0 }), let first = input.first else { return }
        let acknowledged = Int(first) % template.ends.count
        var files = template.files
        files[2] = SharedState.initialBytes(CommitWord(epoch: template.epoch, length: UInt64(template.ends[acknowledged])))
        let edits = FuzzEdits(input.dropFirst(), to: files)
        FuzzScratch.remove(template.scratch)
        guard mkdir(template.scratch, 0o700) == 0, mkdir(template.scratch + "/fuzz", 0o700) == 0 else {
            fatalError("cannot make the scratch group")
        }
        for (name, bytes) in zip(fileNames, edits.files) { FuzzScratch.write(bytes, to: template.scratch + "/fuzz/" + name) }

        let logChange = edits.firstChange[1]
        let onlyTail =
            edits.firstChange[0] == nil && edits.firstChange[2] == nil && (logChange ?? .max) >= template.ends[acknowledged]
        let intact = template.ends.lastIndex { $0 <= (logChange ?? .max) } ?? 0
        let loaded: [RecordID: [UInt8]]
        do {
            let store = try FileStore(
                group: "fuzz", keyProvider: template.provider, root: template.scratch, lockTimeout: .seconds(1),
                compactionMinimumDead: 1_000)
            loaded = records(try store.load().0)
            if case .reload(let again, _) = try store.update(since: .start) {
                FuzzProperty.require(records(again) == loaded, "a replay from the start disagrees with the load")
            }
        } catch {
            FuzzProperty.requireTyped(error, [.storeCorrupted, .unsupportedFormat, .wrongKey], "opening a damaged group")
            FuzzProperty.require(!onlyTail, "damage past the published length failed the group: \(error)")
            return
        }
        if onlyTail {
            FuzzProperty.require(
                loaded == template.contents[intact],
                "damage past the published length did not open to the \(intact) transactions before it")
        } else {
            FuzzProperty.require(
                template.contents[acknowledged...].contains(loaded),
                "a damaged group opened to contents that are not those of an acknowledged commit or later")
        }
    }

    /// The records by id.
    static func records(_ records: [Record]) -> [RecordID: [UInt8]] {
        Dictionary(
            records.map { ($0.id, Array($0.payload)) },
            uniquingKeysWith: { _, _ in
                fatalError("property violated: a load returned a record twice")
            })
    }
}
