import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

/// The store seam's conformance suite (``StoreConformance``) for the memory and file stores; the
/// keyring store runs it in `KeyringTests.Conformance`.
@Suite(.timeLimit(.minutes(3))) struct StoreConformanceTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case memory, file
        var testDescription: String { rawValue }

        /// The backends the process checks run against: not the memory store, which lives inside
        /// one process, so no other process shares it and no crash leaves anything behind.
        static let shared: [Backend] = [.file]
    }

    /// A fresh group of `backend`, removed with the returned folder.
    static func conformance(_ backend: Backend) -> (StoreConformance, TemporaryDirectory) {
        let folder = TemporaryDirectory()
        let root = folder.path
        switch backend {
        case .memory:
            let store = MemoryStore(name: "conformance")
            return (StoreConformance(name: "memory", open: { store }, openWithAnotherKey: nil), folder)
        case .file:
            return (
                StoreConformance(
                    name: "file",
                    open: { try FileStore(group: "conformance", keyProvider: helperPassphrase, root: root) },
                    openWithAnotherKey: {
                        try FileStore(group: "conformance", keyProvider: testPassphrase("another passphrase"), root: root)
                    },
                    processes: StoreConformance.Processes(store: "file", root: root, group: "conformance")), folder
            )
        }
    }

    @Test(arguments: Backend.allCases) func aNewGroupIsEmpty(_ backend: Backend) throws {
        let (suite, folder) = Self.conformance(backend)
        try withExtendedLifetime(folder) { try suite.aNewGroupIsEmpty() }
    }

    @Test(arguments: Backend.allCases) func aCommitIsSeenWholeAtTheNextGeneration(_ backend: Backend) throws {
        let (suite, folder) = Self.conformance(backend)
        try withExtendedLifetime(folder) { try suite.aCommitIsSeenWholeAtTheNextGeneration() }
    }

    @Test(arguments: Backend.allCases) func aFailedOrEmptyTransactionWritesNothing(_ backend: Backend) throws {
        let (suite, folder) = Self.conformance(backend)
        try withExtendedLifetime(folder) { try suite.aFailedOrEmptyTransactionWritesNothing() }
    }

    @Test(arguments: Backend.allCases) func concurrentWritersLoseNothing(_ backend: Backend) throws {
        let (suite, folder) = Self.conformance(backend)
        try withExtendedLifetime(folder) { try suite.concurrentWritersLoseNothing() }
    }

    @Test(arguments: Backend.allCases) func aCommitIsFollowedByAChangeEvent(_ backend: Backend) async throws {
        let (suite, folder) = Self.conformance(backend)
        try await suite.aCommitIsFollowedByAChangeEvent()
        withExtendedLifetime(folder) {}
    }

    @Test(arguments: Backend.allCases) func anotherKeyIsATypedError(_ backend: Backend) throws {
        let (suite, folder) = Self.conformance(backend)
        try withExtendedLifetime(folder) { try suite.anotherKeyIsATypedError() }
    }

    @Test(.tags(.multiProcess), .timeLimit(.minutes(2)), arguments: Backend.shared)
    func aWriterKilledMidCommitLosesNoAcknowledgedTransaction(_ backend: Backend) throws {
        let (suite, folder) = Self.conformance(backend)
        try withExtendedLifetime(folder) { try suite.aWriterKilledMidCommitLosesNoAcknowledgedTransaction(rounds: 10) }
    }

    @Test(.tags(.multiProcess), .timeLimit(.minutes(2)), arguments: Backend.shared)
    func twoProcessesWritingAtOnceLoseNothing(_ backend: Backend) throws {
        let (suite, folder) = Self.conformance(backend)
        try withExtendedLifetime(folder) { try suite.twoProcessesWritingAtOnceLoseNothing(writesPerProcess: 50) }
    }

    /// The public stream over the seam: a group's commit reaches a `changes()` listener.
    @Test func aGroupsChangesFollowItsCommits() async throws {
        let group = CacheGroup(inMemory: "changes")
        let events = try group.changes()
        try group.purgeExpiredAccessTokens()  // commits nothing: no event
        _ = try group.importMSAL(
            Array(
                #"{"AppMetadata": {"appmetadata-login.microsoftonline.com-c": {"client_id": "c", "environment": "login.microsoftonline.com"}}}"#
                    .utf8))
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() != nil)
    }
}
