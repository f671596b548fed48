import Testing

/// What a soak's journals say was written to each token register, and the checks of everything
/// the workers and the final reader saw against it (``check(final:)``).
///
/// Each register has one writer (see `Soak` in `stc-testhelper`), whose journal orders its
/// writes and says when each began and, unless a kill came first, returned. So the register is
/// a single-writer register, and what a lookup may find is exactly decided: the value of the
/// last write that returned before the lookup began (nothing, if none did), or of any later
/// write that began before the lookup ended; and once a lookup found a write, no lookup after
/// it finds an earlier one. A write interrupted by a kill may take effect or not, but never
/// after a later write returned, and not once found and then undone. Anything else is a lost
/// write or a state that never existed.
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
        /// Lookups by the workers, each checked against its register's writer, and lookups
        /// compared with every earlier one of the same register (none behind it).
        var lookups = 0
        var lookupOrders = 0
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
        /// What went wrong, one message per failed check.
        var failed: [String] = []
        var failures: Int { failed.count }

        var description: String {
            """
            \(lookups) lookups against the writers' journals and \(lookupOrders) against earlier lookups, \
            \(registers) tokens read at the end \
            (\(acknowledged) of them an acknowledged store), \(generationSteps) generation steps in a process and \
            \(generationOrders) against earlier snapshots, \
            \(interruptedSeen) of \(interrupted) interrupted writes seen committed; \
            \(failures == 0 ? "nothing lost, no state that never existed" : "\(failures) FAILED")
            """
        }
    }

    let journals: [SoakJournal]
    /// Whether processes see each other's commits when their announcement arrives rather than at
    /// once (a database that a fleet shares): then a process is checked against its own history
    /// (never older than what it saw, its own writes at once), and another process's write may be
    /// missing from its lookups until then, but never from the final read.
    let eventual: Bool
    private(set) var writes: [Account: [Write]] = [:]
    /// The newest epoch anyone saw (1 plus the compactions of a file group).
    private(set) var lastEpoch: UInt64 = 0

    init(journals: [SoakJournal], eventual: Bool = false) {
        self.journals = journals
        self.eventual = eventual
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

    /// The writes whose value a lookup of `register` that began at `start` and ended at `end`
    /// may find, by their place in the register's writes (-1: the empty register before any),
    /// with that value (`nil`: no token).
    func possibleWrites(_ register: SoakJournal.Register, start: UInt64, end: UInt64) -> [(write: Int, value: String?)] {
        let ops = (writes[Account(worker: register.worker, account: register.account)] ?? []).filter {
            $0.scope == nil || $0.scope == register.scope
        }
        let last = ops.lastIndex { $0.ack.map { $0 < start } ?? false }
        var possible = [(write: last ?? -1, value: last.map { ops[$0].secret } ?? nil)]
        for write in (last.map { $0 + 1 } ?? 0)..<ops.count where ops[write].begin < end {
            possible.append((write, ops[write].secret))
        }
        return possible
    }

    /// What a process saw at one moment of a history that only moves forward (the group's
    /// generations, a register's writes): a position in `low...high`, taken after `start` and
    /// before `end`.
    struct Sighting {
        var start: UInt64
        var end: UInt64
        var low: Int
        var high: Int
        var who: String
    }

    /// ``eachAfterOthers(_:_:)`` across processes, or, for an ``eventual`` history, within each
    /// process (the final read, which comes after everything, is compared with every process).
    func eachAfterOthers(_ sightings: [Sighting], _ body: (_ later: Sighting, _ furthestBefore: Sighting) -> Void) {
        guard eventual else { return Self.eachAfterOthers(sightings, body) }
        let last = sightings.filter { $0.start == .max }
        for (_, own) in Dictionary(grouping: sightings.filter { $0.start != .max }, by: \.who) {
            Self.eachAfterOthers(own + last, body)
        }
    }

    /// Each sighting that was taken after others had ended, with the furthest of those: it must
    /// not be behind that one. `body` gets both.
    static func eachAfterOthers(_ sightings: [Sighting], _ body: (_ later: Sighting, _ furthestBefore: Sighting) -> Void) {
        let byEnd = sightings.sorted { $0.end < $1.end }
        var furthest: [Sighting] = []
        for sighting in byEnd { furthest.append(furthest.last.map { $0.low >= sighting.low ? $0 : sighting } ?? sighting) }
        for sighting in byEnd {
            // How many sightings ended before this one began.
            var low = 0
            var high = byEnd.count
            while low < high {
                let middle = (low + high) / 2
                if byEnd[middle].end < sighting.start { low = middle + 1 } else { high = middle }
            }
            if low > 0 { body(sighting, furthest[low - 1]) }
        }
    }

    /// Checks every lookup of the journals, each worker's snapshot positions, and `final`, the
    /// lines of `stc-testhelper soak-read` run after the soak; says each failure in
    /// ``Checks/failed``.
    func check(final: [String]) -> Checks {
        var checks = Checks()
        func failed(_ message: String) { checks.failed.append(message) }
        var seen = Set<String>()
        var newest = SoakJournal.Cursor(generation: 0, epoch: 0)
        // The generation of each snapshot a worker took (after a start line's open: its start
        // is unknown, 0), and each register's value as lookups found it.
        var snapshots: [Sighting] = []
        var lookups: [SoakJournal.Register: [Sighting]] = [:]
        func found(_ secret: String?, in register: SoakJournal.Register, start: UInt64, end: UInt64, by who: String) {
            if let secret { seen.insert(secret) }
            // Another process's write reaches an eventual reader late: any write begun before the
            // lookup ended may be what it finds, however long ago a later one returned.
            let stale = eventual && who != "worker \(register.worker)" && start != .max
            let possible = possibleWrites(register, start: stale ? 0 : start, end: end)
            let matching = possible.filter { $0.value == secret }.map(\.write)
            guard let low = matching.min(), let high = matching.max() else {
                failed(
                    "\(who) found \(secret ?? "no token") in \(register), which held only \(possible.map { $0.value ?? "no token" }) then"
                )
                return
            }
            lookups[register, default: []].append(Sighting(start: start, end: end, low: low, high: high, who: who))
        }
        for journal in journals {
            var begun: UInt64 = 0
            var previous: SoakJournal.Cursor?
            var putBefore: SoakJournal.Cursor?
            for event in journal.events {
                let cursor: SoakJournal.Cursor
                switch event {
                case .start(_, let at, let time):
                    cursor = at
                    putBefore = nil
                    snapshots.append(Sighting(start: 0, end: time, generation: at.generation, who: "worker \(journal.worker)"))
                case .put(_, _, let time):
                    putBefore = previous
                    begun = time
                    continue
                case .signOut(_, let time):
                    begun = time
                    continue
                case .ack(let at, let time):
                    cursor = at
                    snapshots.append(
                        Sighting(start: begun, end: time, generation: at.generation, who: "worker \(journal.worker)"))
                    // A store always commits: the generation it returns at is past the one before.
                    if let before = putBefore, at.generation <= before.generation {
                        failed("worker \(journal.worker): a store returned at generation \(at.generation), not past \(before)")
                    }
                    putBefore = nil
                case .get(let register, let secret, let start, let end, let at):
                    cursor = at
                    snapshots.append(Sighting(start: start, end: end, generation: at.generation, who: "worker \(journal.worker)"))
                    checks.lookups += 1
                    found(secret, in: register, start: start, end: end, by: "worker \(journal.worker)")
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
        eachAfterOthers(snapshots) { later, earlier in
            checks.generationOrders += 1
            if earlier.low > later.high {
                failed("\(later.who) saw generation \(later.high) after \(earlier.who) had seen \(earlier.low)")
            }
        }
        var finalCursor: SoakJournal.Cursor?
        for line in final {
            let fields = line.split(separator: " ").map(String.init)
            if fields.count == 5, fields[0] == "register", let worker = Int(fields[1]), let account = Int(fields[2]),
                let scope = Int(fields[3])
            {
                let register = SoakJournal.Register(worker: worker, account: account, scope: scope)
                checks.registers += 1
                let possible = possibleWrites(register, start: .max, end: .max)
                if possible.count == 1, possible[0].value != nil { checks.acknowledged += 1 }
                found(fields[4] == "-" ? nil : fields[4], in: register, start: .max, end: .max, by: "the final read")
            } else if fields.count == 3, fields[0] == "cursor", let generation = UInt64(fields[1]), let epoch = UInt64(fields[2])
            {
                finalCursor = SoakJournal.Cursor(generation: generation, epoch: epoch)
            } else {
                failed("the final read printed \(line)")
            }
        }
        // A write that a lookup found has taken effect: a lookup after that one (in any process)
        // finds it or a later write, never an earlier one. (A write interrupted by a kill may be
        // found or not, but not found and then undone.)
        for sightings in lookups.values {
            eachAfterOthers(sightings) { later, earlier in
                checks.lookupOrders += 1
                if earlier.low > later.high {
                    failed(
                        "\(later.who) found write \(later.high) of a register after \(earlier.who) had found write \(earlier.low)"
                    )
                }
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

extension SoakHistory.Sighting {
    /// A snapshot at `generation`.
    init(start: UInt64, end: UInt64, generation: UInt64, who: String) {
        self.init(start: start, end: end, low: Int(generation), high: Int(generation), who: who)
    }
}
