import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SecureTokenCache

/// Simulated power loss, in the manner of SQLite's crash tests: a workload runs on a real file
/// store while ``SystemCall/observer`` records every change it makes to the group's folder; then,
/// at every point between two of those changes, each state of the folder that a power cut there
/// could leave (``SimulatedDisk``) is built in a fresh folder and opened with the ordinary API.
/// Every transaction whose commit had returned must be there, and nothing of one that was cut
/// short: the records are those after some whole prefix of the transactions.
///
/// The group must also open, and take a further commit, in every state. A power cut is the one
/// failure a cache must survive unattended: a group that fails (even with a quarantined copy) has
/// lost every token to the user, who must sign in again, so that counts as loss here.
@Suite struct PowerLossTests {
    static let group = "power"
    /// Low, so that the workload compacts several times.
    static let compactionMinimumDead = 6
    /// The lock file holds only its last holder's pid, for diagnostics: no open reads it, so its
    /// unsynced states are left out (they would only multiply the states to open).
    static let fixedNames: Set<String> = ["lock"]

    /// Where the run and the rebuilt states live: a memory-backed folder where there is one, as
    /// thousands of states are each opened and synced, and what is tested is the store against
    /// the simulated disk, not the real one.
    static let memoryBackedFolder = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : NSTemporaryDirectory()

    /// The calls of one task, in order, with the workload's marks between them.
    final class Recording: Sendable {
        private let recorded = Mutex<[SimulatedDisk.Step]>([])

        func observe(_ event: SystemCall.Event) {
            var observed: [SimulatedDisk.Step] = [.call(event)]
            // Stores into the shared state page make no system call; the writer announces each
            // by touching the file, and reading it now gives what the page holds.
            if case .touched(let path) = event { observed.append(.snapshot(path: path, bytes: readBytes(path))) }
            recorded.withLock { $0 += observed }
        }

        func mark(_ step: SimulatedDisk.Step) {
            recorded.withLock { $0.append(step) }
        }

        var steps: [SimulatedDisk.Step] { recorded.withLock { $0 } }
    }

    /// The workload: 60 transactions over five accounts, each account in turn signing in (five
    /// records), refreshing (an access token and a rotated refresh token), storing a token too
    /// large for one sector, removing a token, and signing out (deleting all its records). The
    /// overwrites and deletes make dead records, which make the group compact.
    static func workload() -> [[RecordChange]] {
        let accounts = ["alice", "bob", "carol", "dave", "erin"]
        var present: [String: Set<RecordID>] = [:]
        var transactions: [[RecordChange]] = []
        for index in 1...60 {
            let account = accounts[index % accounts.count]
            let round = index / accounts.count
            let records = present[account, default: []]
            func token(_ name: String, _ kind: RecordKind, _ size: Int = 120) -> RecordChange {
                let payload = "\(account) \(name) \(index) " + String(repeating: "x", count: size)
                return .put(Record(id: RecordID(kind: kind, name: "\(account)-\(name)"), payload: Array(payload.utf8)))
            }
            var changes: [RecordChange]
            if records.isEmpty {
                changes = [
                    token("account", .account), token("id", .idToken), token("refresh", .refreshToken),
                    token("read", .accessToken), token("write", .accessToken),
                ]
            } else {
                switch round % 4 {
                case 1: changes = [token("big", .accessToken, 1_300)]
                case 2:
                    let write = RecordID(kind: .accessToken, name: "\(account)-write")
                    changes = records.contains(write) ? [.delete(write)] : [token("write", .accessToken)]
                case 3:
                    changes = records.sorted { "\($0.kind.rawValue):\($0.name)" < "\($1.kind.rawValue):\($1.name)" }.map(
                        RecordChange.delete)
                default: changes = [token("read", .accessToken), token("refresh", .refreshToken)]
                }
            }
            for change in changes {
                switch change {
                case .put(let record): present[account, default: []].insert(record.id)
                case .delete(let id): present[account]?.remove(id)
                }
            }
            transactions.append(changes)
        }
        return transactions
    }

    /// Runs the workload on the group under `root` (which exists, fully synced), one commit per
    /// transaction, marking each; a second store (another process, as far as the group can
    /// tell) commits every other transaction in the middle third, and the stores are reopened
    /// twice.
    static func run(_ transactions: [[RecordChange]], root: String, key: any KeyProvider, recording: Recording) throws {
        func open() throws -> FileStore {
            try FileStore(group: group, keyProvider: key, root: root, compactionMinimumDead: compactionMinimumDead)
        }
        var first = try open()
        var second: FileStore? = nil
        for (offset, changes) in transactions.enumerated() {
            let index = offset + 1
            if index == 21 || index == 41 {
                second = nil
                first = try open()
            }
            if index == 22 { second = try open() }
            let store = (22..<41).contains(index) && index % 2 == 0 ? second! : first
            recording.mark(.began(index))
            try store.commit(changes)
            recording.mark(.acknowledged(index))
        }
    }

    /// What opening one state of the folder gave.
    enum Outcome: Equatable {
        /// The group opened, took a commit, and a second store opened it with that commit in it:
        /// the records found first.
        case opened([String: String])
        /// Anything else, said for a person.
        case failed(String)
    }

    /// A digest of a state of the folder: states repeat across crash points, and each distinct
    /// one is opened once.
    static func digest(_ state: [String: [UInt8]]) -> [UInt8] {
        var serialized: [UInt8] = []
        for (name, bytes) in state.sorted(by: { $0.key < $1.key }) {
            serialized += Array(name.utf8) + [0]
            withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { serialized += $0 }
            serialized += bytes
        }
        return serialized.withUnsafeBytes { Sodium.checksum($0) }
    }

    /// The first `count` transactions, for a person.
    static func prefix(_ count: Int) -> String {
        switch count {
        case 0: "no transaction"
        case 1: "transaction 1"
        default: "transactions 1-\(count)"
        }
    }

    /// Builds `state` as the group under `root` (replacing what was there) and opens it.
    static func open(_ state: [String: [UInt8]], root: String, key: any KeyProvider) -> Outcome {
        let folder = root + "/" + group
        try? FileManager.default.removeItem(atPath: folder)
        precondition(mkdir(folder, 0o700) == 0, "mkdir \(folder) failed")
        for (name, bytes) in state {
            let fd = Glibc.open(folder + "/" + name, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            precondition(fd >= 0, "creating \(name) failed")
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            precondition(written == bytes.count, "writing \(name) failed")
            Glibc.close(fd)
        }
        do {
            let found: [String: String]
            do {
                // The default threshold: the commit below then appends, which is what must land
                // well after whatever recovery the open did (compactions are the workload's part).
                let store = try FileStore(group: group, keyProvider: key, root: root)
                found = contents(try store.load().0)
                try store.commit([put("after-power-cut", "written after reopening")])
            }
            let reopened = try FileStore(group: group, keyProvider: key, root: root)
            var expected = found
            expected["\(RecordKind.accessToken.rawValue):after-power-cut"] = "written after reopening"
            guard contents(try reopened.load().0) == expected else {
                return .failed("a commit after reopening did not read back as the records found plus that commit")
            }
            if FileManager.default.fileExists(atPath: folder + "/quarantine") {
                return .failed("a file was quarantined although the group opened")
            }
            return .opened(found)
        } catch {
            return .failed("\(error)")
        }
    }

    /// What checking the crash points of one run found.
    struct Check {
        var transactions: Int
        var compactions: Int
        /// The crash points checked: every one of the run, or up to the first that failed.
        var crashPoints: Int
        var statesChecked: Int
        var distinctStates: Int
        /// The failures at the first crash point that failed (none when none did).
        var failures: [String]
        /// How many states failed there, by what went wrong.
        var tally: [String: Int]
        /// Calls the simulated disk did not expect of a healthy run.
        var surprises: [String]
        var seconds: Int64

        /// One line for the test's output.
        func summary(_ name: String) -> String {
            "PowerLossTests (\(name)): \(transactions) transactions, \(compactions) compactions, \(crashPoints) crash points\(failures.isEmpty ? "" : " (up to the first that failed)"), \(statesChecked) states checked (\(distinctStates) distinct, each opened)\(tally.isEmpty ? "" : ", at the failing point " + tally.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")), \(seconds) s\(failures.first.map { "; the first: " + $0 } ?? "")"
        }
    }

    /// Runs the workload with the store's `dropped` syncs left out, and checks every state a
    /// power cut at each of its crash points could leave, up to the first crash point where one
    /// fails.
    static func check(droppingSyncs dropped: Set<SystemCall.Sync>) throws -> Check {
        let start = ContinuousClock.now
        let key = testPassphrase()
        let transactions = Self.workload()
        var models: [[String: String]] = [[:]]
        for changes in transactions {
            var model = models.last!
            apply(.changes(changes, .start), to: &model)
            models.append(model)
        }

        // The group is made and synced before the recording starts: making it is atomic (a
        // synced folder renamed into place), so a power cut then leaves no group or a new one.
        let runRoot = TemporaryDirectory(in: Self.memoryBackedFolder)
        let groupFolder = runRoot.path + "/" + Self.group
        _ = try FileStore(group: Self.group, keyProvider: key, root: runRoot.path)
        var initial: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: groupFolder) {
            initial[name] = readBytes(groupFolder + "/" + name)
        }
        let recording = Recording()
        try SystemCall.$droppedSyncs.withValue(dropped) {
            try SystemCall.$observer.withValue({ event in recording.observe(event) }) {
                try Self.run(transactions, root: runRoot.path, key: key, recording: recording)
            }
        }
        let steps = recording.steps
        let compactions = steps.filter {
            guard case .call(.renamed(let source, let destination)) = $0 else { return false }
            return source == groupFolder + "/log.compact" && destination == groupFolder + "/log"
        }.count

        let stateRoot = TemporaryDirectory(in: Self.memoryBackedFolder)
        var disk = SimulatedDisk(folder: groupFolder, contents: initial, fixedNames: Self.fixedNames)
        var outcomes: [[UInt8]: Outcome] = [:]
        var crashPoints = 0
        var statesChecked = 0
        var failures: [String] = []
        var tally: [String: Int] = [:]
        var acknowledged = 0
        var began = 0
        var beganBeforeLastChange = 0
        var lastChange = "the start of the run"

        /// Checks every state a power cut now could leave.
        func checkCrashPoint() {
            crashPoints += 1
            for state in disk.crashStates() {
                statesChecked += 1
                let digest = Self.digest(state)
                let outcome = outcomes[digest] ?? Self.open(state, root: stateRoot.path, key: key)
                outcomes[digest] = outcome
                let kind: String
                let problem: String
                switch outcome {
                case .failed(let message):
                    kind = "do not open"
                    problem = "the group did not open: \(message)"
                case .opened(let found):
                    if found == models[acknowledged]
                        || beganBeforeLastChange > acknowledged && found == models[beganBeforeLastChange]
                    {
                        continue
                    }
                    if let prefix = models[...beganBeforeLastChange].lastIndex(of: found) {
                        kind = "lose an acknowledged transaction"
                        problem =
                            "acknowledged transaction \(prefix + 1) is lost: the group holds \(Self.prefix(prefix)), but \(Self.prefix(acknowledged)) had been acknowledged"
                    } else if let prefix = models.lastIndex(of: found) {
                        kind = "hold a transaction that had not begun"
                        problem =
                            "the group holds \(Self.prefix(prefix)), but only \(Self.prefix(beganBeforeLastChange)) had begun"
                    } else {
                        kind = "hold part of a transaction"
                        problem = "the group holds records that no prefix of the transactions leaves"
                    }
                }
                tally[kind, default: 0] += 1
                failures.append("crash point \(crashPoints) (after \(lastChange)): \(problem)")
            }
        }

        // Up to the first crash point that fails: the states after it build on the same mistake,
        // and a store that syncs too little leaves ever more unsynced changes to combine.
        for step in steps where failures.isEmpty {
            switch step {
            case .began: began += 1
            case .acknowledged: acknowledged += 1
            case .call, .snapshot:
                var next = disk
                if next.apply(step) {
                    // The point before this change ends here: check it with every acknowledgement
                    // made before this change.
                    checkCrashPoint()
                    lastChange = disk.describe(step)
                    beganBeforeLastChange = began
                }
                disk = next
            }
        }
        if failures.isEmpty { checkCrashPoint() }

        return Check(
            transactions: transactions.count, compactions: compactions, crashPoints: crashPoints, statesChecked: statesChecked,
            distinctStates: outcomes.count, failures: failures, tally: tally, surprises: disk.surprises,
            seconds: (ContinuousClock.now - start).components.seconds)
    }

    @Test(.tags(.slow), .timeLimit(.minutes(3)))
    func everyPowerCutKeepsEveryAcknowledgedTransactionAndNothingPartial() throws {
        let check = try Self.check(droppingSyncs: [])
        print(check.summary("every sync"))
        #expect(check.transactions >= 50)
        #expect(check.compactions >= 3, "the workload must compact several times")
        #expect(check.surprises.isEmpty, "unexpected calls: \(check.surprises)")
        #expect(
            check.failures.isEmpty,
            "at crash point \(check.crashPoints), \(check.tally); the first: \(check.failures.first ?? "")")
    }

    /// The enumeration catches a store that syncs too little: without the log's sync after an
    /// append, a power cut right after a commit returned can leave the log without it.
    @Test(.tags(.slow), .timeLimit(.minutes(3)))
    func withoutTheLogSyncAPowerCutLosesAnAcknowledgedTransaction() throws {
        let check = try Self.check(droppingSyncs: [.appendedLog])
        print(check.summary("without the log's sync"))
        #expect(check.tally["lose an acknowledged transaction", default: 0] > 0, "\(check.tally)")
        #expect(check.failures.contains { $0.contains("acknowledged transaction 1 is lost") }, "\(check.failures)")
    }

    /// The same for the folder's sync after a compaction's rename: the new epoch is published
    /// durably while the rename may not be, and a power cut leaves the old log under a state that
    /// names the new one. That group does not open: every acknowledged transaction is lost to its
    /// user, which the check counts as loss.
    @Test(.tags(.slow), .timeLimit(.minutes(3)))
    func withoutTheFolderSyncAfterACompactionAPowerCutLosesTheGroup() throws {
        let check = try Self.check(droppingSyncs: [.compactionRename])
        print(check.summary("without the folder's sync after compaction"))
        #expect(check.tally["do not open", default: 0] > 0, "\(check.tally)")
        #expect(check.failures.contains { $0.contains("epoch mismatch") }, "\(check.failures)")
    }

    /// The simulator itself: a write across two sectors leaves it untouched, torn, each sector
    /// alone or whole until synced; a rename may not have happened until the folder is synced.
    @Test func theSimulatedDiskLeavesTornWritesAndUnsyncedRenames() {
        var disk = SimulatedDisk(folder: "/g", contents: ["log": [1, 2]], fixedNames: [])
        /// Applies `calls`; whether each changed what a power cut could leave.
        func apply(_ calls: SystemCall.Event...) -> [Bool] {
            calls.map { disk.apply(.call($0)) }
        }
        #expect(apply(.opened(path: "/g/log", flags: O_RDWR, fd: 3)) == [false])
        #expect(apply(.wrote(fd: 3, offset: 2, bytes: [UInt8](repeating: 7, count: 600))) == [true])
        let old: [UInt8] = [1, 2]
        let sevens = [UInt8](repeating: 7, count: 600)
        let zeros = [UInt8](repeating: 0, count: 510)
        let logs = Set(disk.crashStates().map { $0["log"] })
        let expected: Set<[UInt8]?> = [
            old, old + sevens[..<510], old + zeros + sevens[..<90], old + sevens[..<510] + zeros[..<90], old + sevens,
        ]
        #expect(logs == expected)
        #expect(apply(.synced(fd: 3)) == [true])
        #expect(disk.crashStates() == [["log": old + sevens]])

        #expect(apply(.opened(path: "/g/log.new", flags: O_RDWR | O_CREAT | O_EXCL, fd: 4)) == [true])
        #expect(apply(.wrote(fd: 4, offset: 0, bytes: [9])) == [true])
        #expect(apply(.synced(fd: 4)) == [true])
        #expect(apply(.renamed(source: "/g/log.new", destination: "/g/log")) == [true])
        #expect(
            Set(disk.crashStates()) == [
                ["log": old + sevens], ["log": old + sevens, "log.new": [9]], ["log": [9]],
            ])
        #expect(apply(.opened(path: "/g", flags: O_RDONLY | O_DIRECTORY, fd: 5)) == [false])
        #expect(apply(.synced(fd: 5)) == [true])
        #expect(disk.crashStates() == [["log": [9]]])
        #expect(disk.surprises.isEmpty)
    }
}
