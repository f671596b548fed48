import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

/// Bounded soaks of one file group by real processes (``GroupSoak``): lookups, stores, sign-outs
/// and compactions for a fixed number of operations while SIGKILLs land at random moments; then
/// every acknowledged store is in the group, generations only grew, and no lookup found a state
/// that never existed. The keyring store's round is `KeyringTests.Soak`. One soak at a time:
/// each is sized for a minute or less of two shared cores, and a quarter of it under a sanitizer
/// (``Sanitizer``).
@Suite(.serialized, .tags(.multiProcess, .slow), .timeLimit(.minutes(5))) struct GroupSoakTests {
    /// Eight processes: most of the stores a kill interrupts had not reached the log.
    @Test func eightProcessesKilledAtRandomLoseNothingAndSeeOnlyRealStates() throws {
        try Self.soak(workers: 8, operationsPerWorker: 750, kills: 75)
    }

    /// Two processes, killed far more often: with little waiting for the lock, about half the
    /// stores a kill interrupts were already in the log, and the next writer keeps them.
    @Test func twoProcessesKilledInTheirCommitsLoseNothingAndSeeOnlyRealStates() throws {
        try Self.soak(workers: 2, operationsPerWorker: 1_000, kills: 100)
    }

    static func soak(workers: Int, operationsPerWorker: Int, kills: Int) throws {
        let folder = TemporaryDirectory()
        let soak = GroupSoak(
            processes: StoreConformance.Processes(store: "file", root: folder.path, group: "soak"), journals: folder.path,
            workers: workers, operationsPerWorker: Sanitizer.fewer(operationsPerWorker, dividedBy: 4),
            kills: Sanitizer.fewer(kills, dividedBy: 4))
        let figures = try withExtendedLifetime(folder) { try soak.run() }
        print(figures)
    }
}
