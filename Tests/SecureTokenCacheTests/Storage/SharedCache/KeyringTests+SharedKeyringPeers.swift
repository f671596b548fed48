import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

extension KeyringTests {
    /// The msal-keyring store against its real peers (``SharedPeerProofs``): msal-python 1.39.0
    /// with msal-extensions 1.3.1, `PersistedTokenCache` over `LibsecretPersistence` on the
    /// azure-identity item (schema `msal.cache.nocae`, attribute
    /// `MsalClientID=Microsoft.Developer.IdentityService`, raw JSON, a signal file), with each of
    /// the locks msal-extensions may take, in the private keyring.
    @Suite(.tags(.multiProcess)) struct SharedKeyringPeers {
        let proofs: SharedPeerProofs

        init() throws { proofs = try SharedPeerProofs(.keyring) }

        @Test(.timeLimit(.minutes(1)), arguments: ExtensionsLock.allCases)
        func ourTokenIsASilentHitForMsalPythonAndTheReverse(lock: ExtensionsLock) throws {
            try proofs.ourTokenIsASilentHitForMsalPythonAndTheReverse(lock: lock)
        }

        @Test(.timeLimit(.minutes(1)), arguments: ExtensionsLock.allCases)
        func eachSideSeesTheOthersWriteAtItsNextAccess(lock: ExtensionsLock) throws {
            try proofs.eachSideSeesTheOthersWriteAtItsNextAccess(lock: lock)
        }

        @Test(.tags(.slow), arguments: ExtensionsLock.allCases)
        func fourWritersInEachLanguageLoseNothingAndNoReaderSeesHalfADocument(lock: ExtensionsLock) throws {
            try proofs.fourWritersInEachLanguageLoseNothingAndNoReaderSeesHalfADocument(lock: lock)
        }

        /// A longer window than on a file, as a write there is a D-Bus round trip: a kill lands
        /// anywhere from the lock to the signal file's touch.
        @Test(.tags(.slow), .timeLimit(.minutes(2)))
        func aWriterKilledMidWriteLeavesEveryAcknowledgedWriteAndItsLockIsTakenOver() throws {
            try proofs.aWriterKilledMidWriteLeavesEveryAcknowledgedWriteAndItsLockIsTakenOver(window: .milliseconds(40))
        }

        @Test(.timeLimit(.minutes(1)), arguments: ExtensionsLock.allCases)
        func aLockHeldByAStoppedPeerTimesOutOurWriteNamingItsPidAndLookupsGoOn(lock: ExtensionsLock) throws {
            try proofs.aLockHeldByAStoppedPeerTimesOutOurWriteNamingItsPidAndLookupsGoOn(lock: lock)
        }
    }
}
