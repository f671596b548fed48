import Foundation
import Testing

@testable import SecureTokenCache

/// A bounded soak of one group by real processes: `workers` `stc-testhelper soak` workers mix
/// lookups, stores and sign-outs (the file group compacting as they go) for a fixed number of
/// operations, while the soak kills random workers with SIGKILL at random moments and starts
/// them again with new seeds; then ``SoakHistory`` checks their journals and the group they
/// leave (see ``run()``).
///
/// The workers' seeds and the kill schedule come from `seed`, which the figures print: a run
/// replays its choices, not its timing.
struct GroupSoak {
    /// The group, and the helper's `--store` for it.
    var processes: StoreConformance.Processes
    /// Where the workers' journals go.
    var journals: String
    var workers: Int
    /// Operations each worker completes over all its incarnations; what a kill interrupts is
    /// done again by the next incarnation.
    var operationsPerWorker: Int
    var kills: Int
    var seed = UInt64.random(in: 1...UInt64.max)
    /// Run once when half the operations are done (a database restart, say); a worker whose call
    /// meets it says `outage`, and is started again as a killed one is.
    var midway: (() throws -> Void)? = nil

    /// What a run did and checked.
    struct Figures: CustomStringConvertible {
        var store: String
        var workers = 0
        var seed: UInt64 = 0
        var operations = 0
        var stores = 0
        var signOuts = 0
        var lookups = 0
        var ownLookups = 0
        var kills = 0
        /// Kills before the worker had opened the group (and adopted what a killed one left),
        /// and in the middle of a store or sign-out.
        var killedOpening = 0
        var killedMidWrite = 0
        var restarts = 0
        /// Incarnations stopped by a call that met an outage (``midway``).
        var outages = 0
        var compactions = 0
        var checks = SoakHistory.Checks()
        var duration = Duration.zero

        var description: String {
            """
            soak of a \(store) group (seed \(seed)): \(workers) processes, \(operations) operations \
            (\(stores) stores, \(signOuts) sign-outs, \(lookups) lookups of which \(ownLookups) of the process's own \
            tokens), \(kills) kills (\(killedOpening) while opening the group, \(killedMidWrite) in a store or sign-out), \
            \(restarts) restarts\
            \(outages > 0 ? ", \(outages) incarnations stopped by an outage" : "")\
            \(store == "file" ? ", \(compactions) compactions" : ""); checks: \(checks); \
            \(duration.formatted(.units(allowed: [.seconds])))
            """
        }
    }

    /// Runs the soak and checks it; every failed check is an issue of the calling test.
    @discardableResult
    func run() throws -> Figures {
        let started = ContinuousClock.now
        var generator = SeededGenerator(state: seed)
        var figures = Figures(store: processes.store, workers: workers, seed: seed)
        var journals = (0..<workers).map { SoakJournal(path: self.journals + "/journal-\($0)", worker: $0) }
        var incarnations = [Int](repeating: 0, count: workers)
        var assigned = [Int](repeating: operationsPerWorker, count: workers)
        var firstEvent = [Int](repeating: 0, count: workers)
        func start(_ worker: Int, operations: Int) throws -> Helper {
            assigned[worker] = operations
            firstEvent[worker] = journals[worker].events.count
            let seed = Int(generator.next() >> 33)
            return try processes.start(
                "soak",
                ["\(journals[worker].path)", "\(workers)", "\(worker)", "\(incarnations[worker])", "\(seed)", "\(operations)"])
        }
        var running: [Helper?] = try (0..<workers).map { try start($0, operations: operationsPerWorker) }
        defer {
            for helper in running.compactMap({ $0 }) {
                helper.kill()
                _ = helper.finish()
            }
        }
        // The kills come at random points of the soak's progress, none in its last tenth, so
        // that every restarted worker still has work to do among the others.
        let total = workers * operationsPerWorker
        let killPoints = (0..<kills).map { _ in Int.random(in: total / 20...total * 9 / 10, using: &generator) }.sorted()
        var midwayDone = false
        while running.contains(where: { $0 != nil }) {
            // A random moment: within whatever operation each worker is in at the time.
            SystemCall.sleep(for: .milliseconds(Int.random(in: 2...30, using: &generator)))
            for worker in 0..<workers { try journals[worker].read() }
            for worker in 0..<workers {
                guard let helper = running[worker], !helper.process.isRunning else { continue }
                running[worker] = nil
                let output = helper.finish()
                try journals[worker].read()
                if output.last?.hasPrefix("outage") == true {
                    figures.outages += 1
                    incarnations[worker] += 1
                    running[worker] = try start(worker, operations: operationsPerWorker - journals[worker].completedOperations)
                    figures.restarts += 1
                    continue
                }
                try #require(
                    output.last == "done \(assigned[worker])", "worker \(worker) failed: \(output.suffix(3)), \(helper.ending)")
                try #require(
                    journals[worker].completedOperations == operationsPerWorker,
                    "worker \(worker) stopped after \(journals[worker].completedOperations) operations")
            }
            if let step = midway, !midwayDone, journals.map(\.completedOperations).reduce(0, +) >= total / 2 {
                midwayDone = true
                try step()
            }
            // Every kill whose point the soak has passed, not one per tick: fast workers would
            // otherwise finish before the last points come.
            while figures.kills < kills, journals.map(\.completedOperations).reduce(0, +) >= killPoints[figures.kills],
                let victim = (0..<workers).filter({ running[$0] != nil }).randomElement(using: &generator)
            {
                running[victim]!.kill()
                _ = running[victim]!.finish()
                running[victim] = nil
                figures.kills += 1
                try journals[victim].read()
                switch journals[victim].events[firstEvent[victim]...].last {
                case nil: figures.killedOpening += 1
                case .put?, .signOut?: figures.killedMidWrite += 1
                default: break
                }
                let left = operationsPerWorker - journals[victim].completedOperations
                if left > 0 {
                    incarnations[victim] += 1
                    running[victim] = try start(victim, operations: left)
                    figures.restarts += 1
                }
            }
        }
        let final = try processes.start("soak-read", ["\(workers)"]).finish()
        // A database that a fleet shares promises each process its own history at once and the
        // others' when their announcement arrives (README, the fleet's promise).
        let history = SoakHistory(journals: journals, eventual: processes.store == "postgres")
        figures.checks = history.check(final: final)
        for message in figures.checks.failed.prefix(20) { Issue.record(Comment(rawValue: message)) }
        figures.duration = ContinuousClock.now - started
        for journal in journals {
            for event in journal.events {
                switch event {
                case .put: figures.stores += 1
                case .signOut: figures.signOuts += 1
                case .get(let register, _, _, _, _):
                    figures.lookups += 1
                    if register.worker == journal.worker { figures.ownLookups += 1 }
                default: break
                }
            }
        }
        figures.operations = journals.map(\.completedOperations).reduce(0, +)
        // A file group's epoch counts its compactions; a database group's is a random number.
        figures.compactions = processes.store == "file" ? Int(max(history.lastEpoch, 1) - 1) : 0
        #expect(figures.operations == total, "\(figures)")
        #expect(figures.kills == kills, "\(figures)")
        return figures
    }
}
