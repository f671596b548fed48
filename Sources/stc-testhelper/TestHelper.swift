// A helper the multi-process tests spawn: each command opens a group in its own process and
// writes or reads it, printing one line per event to stdout (flushed at once, so a parent that
// kills this process sees every line printed before the kill). The group is a FileStore group
// unless `--store keyring` comes first (a KeyringStore group whose coordination folder is under
// <root>; with `--store postgres` <root> is the database's URL; the store conformance suite runs
// its process checks against each). For shared-churn
// the cache is an msal-file cache at <path>, or with `--store keyring` the
// azure-identity keyring item with its signal file at <path>.
//
//   stc-testhelper [--store file|keyring|postgres] <command> <root> <group> ...
//
//   stc-testhelper write <root> <group> <prefix> <count>   one transaction per record, "ack <i>"
//   stc-testhelper churn <root> <group>                      transactions n+1, n+2, ... until killed
//   stc-testhelper overwrite <root> <group> <prefix> <n>     n writes cycling over 5 names (compacts)
//   stc-testhelper count <root> <group>                      "count <records in this process's view>"
//   stc-testhelper fill <root> <group> <fsize-limit>         writes under RLIMIT_FSIZE until full
//   stc-testhelper bench <root> <group> <records>            rough timings of open, write, catch-up
//   stc-testhelper soak <root> <group> <journal> <workers> <worker> <incarnation> <seed> <n>
//                                                            a soak worker's n lookups, stores and sign-outs
//   stc-testhelper soak-read <root> <group> <workers>        every soak register (see SoakCommands.swift)
//   stc-testhelper app-stampede <root> <group> <authority> <client> <tasks>
//                                                            tasks ask at once for one app token
//   stc-testhelper shared-churn <path> <account> <prefix>      writes to a shared cache until killed
//                                                            (see SharedCacheCommands.swift)
//
// The commands that run until killed also stop when the process that started them ends.

import Glibc

// A test helper drives internal APIs through `@testable import`, which only debug builds allow;
// a release build gets a stub, so `swift build -c release` of the package works.
#if DEBUG
    @testable import SecureTokenCache
    #if canImport(SecureTokenCachePostgres)
        @testable import SecureTokenCachePostgres
    #endif

    @main
    enum TestHelper {
        static func main() {
            // Started from a test runner's thread, the helper inherits that thread's signal mask,
            // in which SIGTERM is blocked: unblocked, a SIGTERM stops it as it stops any program.
            var none = sigset_t()
            sigemptyset(&none)
            pthread_sigmask(SIG_SETMASK, &none, nil)
            _ = parent
            var arguments = CommandLine.arguments
            var kind = "file"
            if arguments.count >= 3, arguments[1] == "--store" {
                kind = arguments[2]
                arguments.removeSubrange(1...2)
            }
            guard arguments.count >= 4, ["file", "keyring", "postgres"].contains(kind) else {
                fail("usage: stc-testhelper [--store file|keyring|postgres] write|churn|fill <root> <group> ...")
            }
            let root = arguments[2]
            let group = arguments[3]
            let open = { (compactionMinimumDead: Int) in
                try Self.open(kind, root, group, compactionMinimumDead: compactionMinimumDead)
            }
            do {
                switch arguments[1] {
                case "write" where arguments.count == 6:
                    try write(open(64), prefix: arguments[4], count: Int(arguments[5])!)
                case "overwrite" where arguments.count == 6:
                    try overwrite(open(16), prefix: arguments[4], count: Int(arguments[5])!)
                case "count":
                    say("count \(try open(64).load().0.count)")
                case "churn":
                    try churn(open(16))
                case "bench" where arguments.count == 5:
                    try bench(open(64), open(64), count: Int(arguments[4])!)
                case "shared-churn" where arguments.count == 5:
                    try sharedChurn(
                        keyring: kind == "keyring", path: arguments[2], account: arguments[3], prefix: arguments[4])
                case "soak" where arguments.count == 10:
                    let numbers = arguments[5...].map { Int($0)! }
                    let opened: CacheGroup
                    do {
                        opened = try CacheGroup(name: group, store: Soak.open(kind, root, group))
                    } catch let error as TokenCacheError where error.code == .databaseUnavailable {
                        say("outage \(error.code)")  // the database is restarting: the soak starts another
                        return
                    }
                    try soak(
                        opened, journal: arguments[4], workers: numbers[0], worker: numbers[1], incarnation: numbers[2],
                        seed: numbers[3], operations: numbers[4])
                case "soak-read" where arguments.count == 5:
                    try soakRead(CacheGroup(name: group, store: Soak.open(kind, root, group)), workers: Int(arguments[4])!)
                case "app-stampede" where arguments.count == 7:
                    try appTokenStampede(
                        open(64), group: group, authority: arguments[4], client: arguments[5], tasks: Int(arguments[6])!)
                case "fill" where arguments.count == 5:
                    try fill(limit: UInt64(arguments[4])!) { try open(64) }
                default:
                    fail("unknown command")
                }
            } catch let error as TokenCacheError {
                say("error \(error.code) \(error.message)")
                exit(2)
            } catch {
                fail("\(error)")
            }
        }

        /// Opens `group` under `root` in the store `kind` names, as the tests open it. Writers wait
        /// long for the lock: several helpers and the test share one loaded machine. On a keyring
        /// the holder's every write is Secret Service calls, and in CI's sanitizer pass the helpers
        /// and their gnome-keyring run at the lowest priority beside the other tests: a holder can
        /// be kept from the processor well past what a file store's holder ever is.
        static func open(
            _ kind: String, _ root: String, _ group: String, compactionMinimumDead: Int,
            journalSizeLimit: Int = KeyringJournal.defaultSizeLimit
        ) throws -> any CacheStore {
            if kind == "keyring" {
                return try KeyringStore(group: group, root: root, lockTimeout: .seconds(120), journalSizeLimit: journalSizeLimit)
            }
            if kind == "postgres" {
                #if canImport(SecureTokenCachePostgres)
                    // The root is the database's URL.
                    var configuration = try PostgresStoreConfiguration(url: root)
                    configuration.timeout = .seconds(30)
                    return try RowStore(
                        name: group, database: PostgresRowDatabase.shared(configuration, logger: .discarding),
                        keyProvider: PassphraseKeyProvider(passphrase: "multi-process passphrase", parameters: .minimum),
                        protectionReason: "stc-testhelper")
                #else
                    fail("this build has no PostgreSQL store (STC_WITHOUT_POSTGRES was set)")
                #endif
            }
            return try FileStore(
                group: group,
                keyProvider: PassphraseKeyProvider(passphrase: "multi-process passphrase", parameters: .minimum),
                root: root,
                lockTimeout: .seconds(30),
                compactionMinimumDead: compactionMinimumDead
            )
        }

        /// `count` transactions, each putting `<prefix>-<i>`; then checks every one is in this view.
        static func write(_ store: any CacheStore, prefix: String, count: Int) throws {
            var cursor = StoreCursor.start
            for index in 0..<count {
                let name = "\(prefix)-\(index)"
                cursor = try store.transact(since: cursor) { _ in
                    [.put(Record(id: RecordID(kind: .accessToken, name: name), payload: Array(name.utf8)))]
                }
                say("ack \(index)")
            }
            let names = Set(try store.load().0.map(\.id.name))
            let missing = (0..<count).filter { !names.contains("\(prefix)-\($0)") }
            say(missing.isEmpty ? "verified \(names.count)" : "missing \(missing)")
        }

        /// `count` transactions, transaction i putting `<prefix>-<i % 5>` = i: mostly dead records,
        /// so the group compacts while other processes write and read.
        static func overwrite(_ store: any CacheStore, prefix: String, count: Int) throws {
            var cursor = StoreCursor.start
            for index in 0..<count {
                cursor = try store.transact(since: cursor) { _ in
                    [
                        .put(
                            Record(
                                id: RecordID(kind: .accessToken, name: "\(prefix)-\(index % 5)"), payload: Array("\(index)".utf8))
                        )
                    ]
                }
            }
            say("done \(count)")
        }

        /// Transaction n puts `live-n` and `counter` = n, and deletes `live-(n-5)`; so the group after
        /// n transactions is fully determined by n. Runs until killed or its parent ends. Compacts
        /// often.
        static func churn(_ store: any CacheStore) throws {
            var cursor = StoreCursor.start
            var next = 1
            while !parentIsGone {
                let committed = try store.transact(since: cursor) { txn in
                    var counter = 0
                    if case .reload(let records, _) = txn.update {
                        counter =
                            records.first { $0.id.name == "counter" }.map { Int(String(decoding: $0.payload, as: UTF8.self))! }
                            ?? 0
                    } else if case .changes(let changes, _) = txn.update {
                        counter = next - 1
                        for case .put(let record) in changes where record.id.name == "counter" {
                            counter = Int(String(decoding: record.payload, as: UTF8.self))!
                        }
                    } else {
                        counter = next - 1
                    }
                    next = counter + 1
                    var changes: [RecordChange] = [
                        .put(Record(id: RecordID(kind: .accessToken, name: "live-\(next)"), payload: Array("v\(next)".utf8))),
                        .put(Record(id: RecordID(kind: .appMetadata, name: "counter"), payload: Array("\(next)".utf8))),
                    ]
                    if next > 5 { changes.append(.delete(RecordID(kind: .accessToken, name: "live-\(next - 5)"))) }
                    return changes
                }
                cursor = committed
                say("ack \(next)")
                next += 1
            }
        }

        /// Writes 4 KiB records under a file-size limit until the store reports `.diskFull`.
        static func fill(limit: UInt64, open: () throws -> any CacheStore) throws {
            signal(SIGXFSZ, SIG_IGN)  // get EFBIG from write(2) instead of being killed
            var limits = rlimit(rlim_cur: rlim_t(limit), rlim_max: rlim_t(limit))
            guard setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limits) == 0 else { fail("setrlimit failed") }
            let store = try open()
            var cursor = try store.load().1
            for index in 0..<100_000 {
                let name = "fill-\(index)"
                do {
                    cursor = try store.transact(since: cursor) { _ in
                        [
                            .put(
                                Record(
                                    id: RecordID(kind: .accessToken, name: name),
                                    payload: [UInt8](repeating: UInt8(index % 251), count: 4096)))
                        ]
                    }
                } catch let error as TokenCacheError where error.code == .diskFull {
                    say("diskfull \(error.message)")
                    let count = try store.load().0.count
                    say("records \(count)")
                    return
                }
                say("ack \(index)")
            }
            fail("the file-size limit was never reached")
        }

        /// Rough timings at `count` records of ~2 KiB: open+load, one-record write, a second
        /// instance catching up after that write, and the freshness check.
        static func bench(_ store: any CacheStore, _ reader: @autoclosure () throws -> any CacheStore, count: Int) throws {
            let payload = [UInt8](repeating: 0x41, count: 2048)
            var cursor = StoreCursor.start
            for batch in stride(from: 0, to: count, by: 1000) {
                cursor = try store.transact(since: cursor) { _ in
                    (batch..<min(count, batch + 1000)).map {
                        .put(
                            Record(
                                id: RecordID(kind: .accessToken, name: "uid.utid-login.windows.net-accesstoken-client-\($0)"),
                                payload: payload))
                    }
                }
            }
            func now() -> Double {
                var t = timespec()
                clock_gettime(CLOCK_MONOTONIC, &t)
                return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
            }
            var start = now()
            let reader = try reader()
            var (records, readerCursor) = try reader.load()
            say("open+load \(records.count) records: \(Int((now() - start) * 1000)) ms")
            let writes = 50
            var writeTime = 0.0
            var catchUpTime = 0.0
            for index in 0..<writes {
                start = now()
                cursor = try store.transact(since: cursor) { _ in
                    [.put(Record(id: RecordID(kind: .accessToken, name: "extra-\(index % 5)"), payload: payload))]
                }
                writeTime += now() - start
                start = now()
                let update = try reader.update(since: readerCursor)
                catchUpTime += now() - start
                readerCursor = update.cursor
            }
            say(
                "write 1 record: \(Int(writeTime / Double(writes) * 1e6)) us; catch up 1 record: \(Int(catchUpTime / Double(writes) * 1e6)) us"
            )
            start = now()
            var sum: UInt64 = 0
            for _ in 0..<1_000_000 { sum &+= reader.currentGeneration() }
            say("freshness check: \(Int((now() - start) * 1000)) ns (\(sum % 2))")
            records = []
        }

        /// The process that started the helper (read first thing in ``main()``).
        static let parent = getppid()

        /// Whether the process that started the helper has ended (the helper was handed to
        /// another): a helper that writes until killed stops then, rather than write on for a
        /// test runner that was itself killed.
        static var parentIsGone: Bool { getppid() != parent }

        static func say(_ line: String) {
            var text = Array((line + "\n").utf8)
            text.withUnsafeMutableBytes { _ = Glibc.write(1, $0.baseAddress, $0.count) }
        }

        static func fail(_ message: String) -> Never {
            say("fatal \(message)")
            exit(1)
        }
    }
#else
    @main
    enum TestHelper {
        static func main() {
            print("stc-testhelper drives internal APIs for the tests and exists in debug builds only")
            exit(2)
        }
    }
#endif
