import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

extension KeyringTests {
    /// The soak of ``GroupSoakTests`` on a keyring group, shorter (2,000 operations, 24 kills):
    /// every write there is a Secret Service call, and the group's journal starts again every
    /// few dozen of them. A quarter of it under a sanitizer (``Sanitizer``).
    @Suite struct Soak {
        @Test(.tags(.multiProcess, .slow), .timeLimit(.minutes(5)))
        func processesKilledAtRandomLoseNothingAndSeeOnlyRealStates() throws {
            let folder = TemporaryDirectory()
            let soak = GroupSoak(
                processes: StoreConformance.Processes(
                    store: "keyring", root: folder.path, group: KeyringTestSupport.uniqueGroup("soak")),
                journals: folder.path, workers: 8, operationsPerWorker: Sanitizer.fewer(250, dividedBy: 4),
                kills: Sanitizer.fewer(24, dividedBy: 4))
            let figures = try withExtendedLifetime(folder) { try soak.run() }
            print(figures)
        }
    }
}
