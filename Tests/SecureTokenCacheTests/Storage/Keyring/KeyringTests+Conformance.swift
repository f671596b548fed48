import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

extension KeyringTests {
    /// The store seam's conformance suite (``StoreConformance``) against the real Secret Service.
    @Suite struct Conformance {
        /// A fresh keyring group, its coordination folder under a fresh root.
        static func conformance() -> (StoreConformance, TemporaryDirectory) {
            let folder = TemporaryDirectory()
            let root = folder.path
            let group = KeyringTestSupport.uniqueGroup("conformance")
            return (
                StoreConformance(
                    name: "keyring", open: { try KeyringStore(group: group, root: root) },
                    openWithAnotherKey: {
                        // The key item replaced behind the library's back.
                        let key = try SecretKey()
                        try key.withUnsafeBytes { bytes in
                            try KeyringClient(schema: .group).store(
                                bytes, label: "SecureTokenCache key (\(group))", attributes: ["group": group, "role": "key"])
                        }
                        KeyringKeyProvider.forgetCachedKeys()
                        return try KeyringStore(group: group, root: root)
                    },
                    processes: StoreConformance.Processes(store: "keyring", root: root, group: group)), folder
            )
        }

        @Test func aNewGroupIsEmpty() throws {
            let (suite, folder) = Self.conformance()
            try withExtendedLifetime(folder) { try suite.aNewGroupIsEmpty() }
        }

        @Test func aCommitIsSeenWholeAtTheNextGeneration() throws {
            let (suite, folder) = Self.conformance()
            try withExtendedLifetime(folder) { try suite.aCommitIsSeenWholeAtTheNextGeneration() }
        }

        @Test func aFailedOrEmptyTransactionWritesNothing() throws {
            let (suite, folder) = Self.conformance()
            try withExtendedLifetime(folder) { try suite.aFailedOrEmptyTransactionWritesNothing() }
        }

        @Test func concurrentWritersLoseNothing() throws {
            let (suite, folder) = Self.conformance()
            try withExtendedLifetime(folder) { try suite.concurrentWritersLoseNothing(writesPerThread: 5) }
        }

        @Test func anotherKeyIsATypedError() throws {
            let (suite, folder) = Self.conformance()
            try withExtendedLifetime(folder) { try suite.anotherKeyIsATypedError() }
        }

        @Test(.tags(.multiProcess), .timeLimit(.minutes(3)))
        func aWriterKilledMidCommitLosesNoAcknowledgedTransaction() throws {
            let (suite, folder) = Self.conformance()
            try withExtendedLifetime(folder) { try suite.aWriterKilledMidCommitLosesNoAcknowledgedTransaction(rounds: 5) }
        }

        @Test(.tags(.multiProcess), .timeLimit(.minutes(3)))
        func twoProcessesWritingAtOnceLoseNothing() throws {
            let (suite, folder) = Self.conformance()
            try withExtendedLifetime(folder) { try suite.twoProcessesWritingAtOnceLoseNothing(writesPerProcess: 20) }
        }

        @Test func aCommitIsFollowedByAChangeEvent() async throws {
            let (suite, folder) = Self.conformance()
            try await suite.aCommitIsFollowedByAChangeEvent()
            withExtendedLifetime(folder) {}
        }
    }
}
