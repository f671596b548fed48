import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

/// Every suite that needs the private test keyring, run one test at a time: some tests lock the
/// collection or pause the daemon, which the others must not see.
@Suite(
    .serialized,
    .tags(.keyring),
    .timeLimit(.minutes(5)),
    .enabled(if: KeyringTestSupport.keyringRequired, "needs scripts/with-keyring (STC_KEYRING_REQUIRED=1)")
)
struct KeyringTests {}
