import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

/// The msal-file store against its real peers (``SharedPeerProofs``): msal-python 1.39.0 with
/// msal-extensions 1.3.1, `PersistedTokenCache` over `FilePersistence`, as Azure CLI keeps its
/// cache, with each of the locks msal-extensions may take.
@Suite(.serialized, .tags(.multiProcess), .timeLimit(.minutes(5))) struct SharedCachePeerTests {
    let proofs: SharedPeerProofs

    init() throws { proofs = try SharedPeerProofs(.file) }

    @Test(arguments: ExtensionsLock.allCases) func eachEnvironmentLocksAsItsNameSays(lock: ExtensionsLock) throws {
        #expect(try lock.run(["lock-kind"]).trimmingCharacters(in: .whitespacesAndNewlines) == lock.rawValue)
    }

    @Test(arguments: ExtensionsLock.allCases) func ourTokenIsASilentHitForMsalPythonAndTheReverse(lock: ExtensionsLock) throws {
        try proofs.ourTokenIsASilentHitForMsalPythonAndTheReverse(lock: lock)
    }

    @Test(arguments: ExtensionsLock.allCases) func eachSideSeesTheOthersWriteAtItsNextAccess(lock: ExtensionsLock) throws {
        try proofs.eachSideSeesTheOthersWriteAtItsNextAccess(lock: lock)
    }

    @Test(.tags(.slow), arguments: ExtensionsLock.allCases) func fourWritersInEachLanguageLoseNothingAndNoReaderSeesHalfADocument(
        lock: ExtensionsLock
    ) throws {
        try proofs.fourWritersInEachLanguageLoseNothingAndNoReaderSeesHalfADocument(lock: lock)
    }

    @Test(.tags(.slow)) func aWriterKilledMidWriteLeavesEveryAcknowledgedWriteAndItsLockIsTakenOver() throws {
        try proofs.aWriterKilledMidWriteLeavesEveryAcknowledgedWriteAndItsLockIsTakenOver(window: .milliseconds(15))
    }

    @Test(arguments: ExtensionsLock.allCases) func aLockHeldByAStoppedPeerTimesOutOurWriteNamingItsPidAndLookupsGoOn(
        lock: ExtensionsLock
    ) throws {
        try proofs.aLockHeldByAStoppedPeerTimesOutOurWriteNamingItsPidAndLookupsGoOn(lock: lock)
    }
}
