import Foundation
import SecureTokenCache
import Testing

/// Whether `CacheGroup.open` supports the keyring store and a private keyring is running
/// (`scripts/with-keyring` sets `STC_KEYRING_REQUIRED=1`). Probing opens a group in the
/// keyring, so it is only done inside that private keyring, never in a user's own.
enum KeyringStore {
    static let required = ProcessInfo.processInfo.environment["STC_KEYRING_REQUIRED"] == "1"

    /// Keyring tests run inside `scripts/with-keyring` (always in CI), where a broken keyring
    /// fails them instead of skipping them.
    static let available = required
}
