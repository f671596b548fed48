import Testing

/// What a soak's journals say was written to each token register, and the checks of everything
/// the workers and the final reader saw against it (``check(final:)``).
///
/// Each register has one writer (see `Soak` in `stc-testhelper`), whose journal orders its
/// writes and says when each began and, unless a kill came first, returned. So the register is
/// a single-writer register, and what a lookup may find is exactly decided: the value of the
/// last write that returned before the lookup began (nothing, if none did), or of any later
/// write that began before the lookup ended. A write interrupted by a kill may take effect or
/// not, but never after a later write returned. Anything else is a lost write or a state that
/// never existed.
struct SoakHistory {
    /// A worker's account: its sign-outs empty the registers of every scope.
    struct Account: Hashable {
        var worker: Int
        var account: Int
    }

    /// A store into one register of an account (`scope` and `secret`), or a sign-out (both `nil`).
    struct Write {
        var scope: Int?
        var secret: String?
        var begin: UInt64
        /// When it returned; `nil` when the worker was killed first.
        var ack: UInt64?
    }

    /// What ``check(final:)`` checked.
    struct Checks: CustomStringConvertible {
        /// Lookups by the workers, each checked against its register's writer.
        var lookups = 0
        /// Registers the final reader read, and how many of them hold a store that returned
        /// (which must be there, exactly).
        var registers = 0
        var acknowledged = 0
        /// Consecutive snapshot positions of one worker compared (never older than the last),
        /// and snapshots compared with every one any process took before (never older either).
        var generationSteps = 0
        var generationOrders = 0
        /// Writes a kill interrupted, and how many of them were seen to have committed.
        var interrupted = 0
        var interruptedSeen = 0
        var failures = 0

        var description: String {
            """
            \(lookups) lookups against the writers' journals, \(registers) tokens read at the end \
            (\(acknowledged) of them an acknowledged store), \(generationSteps) generation steps in a process and \
            \(generationOrders) across processes, \
            \(interruptedSeen) of \(interrupted) interrupted writes seen committed; \
            \(failures == 0 ? "nothing lost, no state that never existed" : "\(failures) FAILED")
            """
        }
    }

    let journals: [SoakJournal]
    private(set) var writes: [Account: [Write]] = [:]
    /// The newest epoch anyone saw (1 plus the compactions of a file group).
    private(set) var lastEpoch: UInt64 = 0

    init(journals: [SoakJournal]) {
        self.journals = journals
        for journal in journals {
            var pending: Account?
            for event in journal.events {
                switch event {
                case .start(_, let cursor, _):
                    // The incarnation before was killed in its write, if one is pending.
                    pending = nil
                    lastEpoch = max(lastEpoch, cursor.epoch)
                case .put(let register, let secret, let time):
                    let account = Account(worker: register.worker, account: register.account)
                    writes[account, default: []].append(Write(scope: register.scope, secret: secret, begin: time))
                    pending = account
                case .signOut(let account, let time):
                    let account = Account(worker: journal.worker, account: account)
                    writes[account, default: []].append(Write(scope: nil, secret: nil, begin: time))
                    pending = account
                case .ack(let cursor, let time):
                    if let account = pending, let last = writes[account]?.indices.last { writes[account]![last].ack = time }
                    pending = nil
                    lastEpoch = max(lastEpoch, cursor.epoch)
                case .get(_, _, _, _, let cursor):
                    lastEpoch = max(lastEpoch, cursor.epoch)
                }
            }
        }
    }

    /// The values a lookup of `register` that began at `start` and ended at `end` may find
    /// (`nil`: no token).
    func possibleValues(_ register: SoakJournal.Register, start: UInt64, end: UInt64) -> [String?] {
        let ops = (writes[Account(worker: register.worker, account: register.account)] ?? []).filter {
            $0.scope == nil || $0.scope == register.scope
        }
        let last = ops.lastIndex { $0.ack.map { $0 < start } ?? false }
        var values: [String?] = [last.map { ops[$0].secret } ?? nil]
        for op in ops[(last.map { $0 + 1 } ?? 0)...] where op.begin < end { values.append(op.secret) }
        return values
    }

    /// Checks every lookup of the journals, each worker's snapshot positions, and `final`, the
    /// lines of `stc-testhelper soak-read` run after the soak; records an issue per failure.
    func check(final: [String]) -> Checks {
        var checks = Checks()
        func failed(_ message: String) {
            checks.failures += 1
            if checks.failures <= 20 { Issue.record(Comment(rawValue: message)) }
        }
        var seen = Set<String>()
        var newest = SoakJournal.Cursor(generation: 0, epoch: 0)
        // Each snapshot a worker took and the times it was taken between: not before `start`
        // (unknown for a start line: 0), not after `end`.
        var observations: [(start: UInt64, end: UInt64, generation: UInt64, worker: Int)] = []
        for journal in journals {
            var begun: UInt64 = 0
            var previous: SoakJournal.Cursor?
            var putBefore: SoakJournal.Cursor?
            for event in journal.events {
                var cursor: SoakJournal.Cursor
                switch event {
                case .start(_, let at, let time):
                    cursor = at
                    putBefore = nil
                    observations.append((0, time, at.generation, journal.worker))
                case .put(_, _, let time):
                    putBefore = previous
                    begun = time
                    continue
                case .signOut(_, let time):
                    begun = time
                    continue
                case .ack(let at, let time):
                    cursor = at
                    observations.append((begun, time, at.generation, journal.worker))
                    // A store always commits: the generation it returns at is past the one before.
                    if let before = putBefore, at.generation <= before.generation {
                        failed("worker \(journal.worker): a store returned at generation \(at.generation), not past \(before)")
                    }
                    putBefore = nil
                case .get(let register, let secret, let start, let end, let at):
                    cursor = at
                    observations.append((start, end, at.generation, journal.worker))
                    checks.lookups += 1
                    if let secret { seen.insert(secret) }
                    let possible = possibleValues(register, start: start, end: end)
                    if !possible.contains(secret) {
                        failed(
                            "worker \(journal.worker) found \(secret ?? "no token") in \(register), which held only \(possible.map { $0 ?? "no token" }) then"
                        )
                    }
                }
                if let previous {
                    checks.generationSteps += 1
                    if cursor.generation < previous.generation || cursor.epoch < previous.epoch {
                        failed("worker \(journal.worker) went back from \(previous) to \(cursor)")
                    }
                }
                previous = cursor
                if cursor.generation > newest.generation { newest = cursor }
            }
        }
        // A snapshot is at least as new as the group when it was asked for and no newer than the
        // group when it came back, so one asked for after another came back (in any process) is
        // not older than that one.
        observations.sort { $0.end < $1.end }
        var newestByThen: [(generation: UInt64, worker: Int)] = []
        for observation in observations {
            let before = newestByThen.last
            newestByThen.append(
                before.map { $0.generation >= observation.generation } == true
                    ? before! : (observation.generation, observation.worker))
        }
        for observation in observations where observation.start > 0 {
            // How many snapshots came back before this one was asked for.
            var low = 0
            var high = observations.count
            while low < high {
                let middle = (low + high) / 2
                if observations[middle].end < observation.start { low = middle + 1 } else { high = middle }
            }
            guard low > 0 else { continue }
            checks.generationOrders += 1
            let newer = newestByThen[low - 1]
            if newer.generation > observation.generation {
                failed(
                    "worker \(observation.worker) saw generation \(observation.generation) after worker \(newer.worker) had seen \(newer.generation)"
                )
            }
        }
        var finalCursor: SoakJournal.Cursor?
        for line in final {
            let fields = line.split(separator: " ").map(String.init)
            if fields.count == 5, fields[0] == "register", let worker = Int(fields[1]), let account = Int(fields[2]),
                let scope = Int(fields[3])
            {
                let register = SoakJournal.Register(worker: worker, account: account, scope: scope)
                let secret = fields[4] == "-" ? nil : fields[4]
                checks.registers += 1
                if let secret { seen.insert(secret) }
                let possible = possibleValues(register, start: .max, end: .max)
                if possible.count == 1, possible[0] != nil { checks.acknowledged += 1 }
                if !possible.contains(secret) {
                    failed(
                        "the group holds \(secret ?? "no token") in \(register) after the soak, not \(possible.map { $0 ?? "no token" })"
                    )
                }
            } else if fields.count == 3, fields[0] == "cursor", let generation = UInt64(fields[1]), let epoch = UInt64(fields[2])
            {
                finalCursor = SoakJournal.Cursor(generation: generation, epoch: epoch)
            } else {
                failed("the final read printed \(line)")
            }
        }
        let all = writes.values.joined()
        let stores = all.filter { $0.scope != nil }
        checks.interrupted = all.filter { $0.ack == nil }.count
        checks.interruptedSeen = stores.filter { $0.ack == nil && seen.contains($0.secret!) }.count
        if let finalCursor {
            // Every store commits once and bumps the generation once; a sign-out may find nothing
            // to change and commit nothing.
            let acknowledgedStores = UInt64(stores.filter { $0.ack != nil }.count)
            if finalCursor.generation < max(newest.generation, acknowledgedStores) || finalCursor.generation > UInt64(all.count)
                || finalCursor.epoch < lastEpoch
            {
                failed(
                    "the group ends at \(finalCursor) after \(acknowledgedStores) acknowledged stores of \(all.count) writes begun; the workers saw \(newest)"
                )
            }
        } else {
            failed("the final read printed no cursor: \(final.suffix(3))")
        }
        return checks
    }
}
