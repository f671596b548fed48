import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

/// A bounded soak of one file group by eight real processes (``GroupSoak``): lookups, stores,
/// sign-outs and compactions for 8,000 operations while 100 SIGKILLs land at random moments;
/// then every acknowledged store is in the group, generations only grew, and no lookup found a
/// state that never existed. The keyring store's round is `KeyringTests.Soak`.
@Suite(.tags(.multiProcess, .slow), .timeLimit(.minutes(5))) struct GroupSoakTests {
    @Test func eightProcessesKilledAtRandomLoseNothingAndSeeOnlyRealStates() throws {
        let folder = TemporaryDirectory()
        let soak = GroupSoak(
            processes: StoreConformance.Processes(store: "file", root: folder.path, group: "soak"), journals: folder.path)
        let figures = try withExtendedLifetime(folder) { try soak.run() }
        print(figures)
    }
}
