import Foundation
import SecureTokenCache
import Testing

/// File-store groups for the persistence tests.
enum FileStore {
    /// The file store is always in the build: its tests run everywhere and fail, never skip.
    static let available = true

    static let passphraseVariable = "CACHETOOL_TEST_PASSPHRASE"

    /// Global options for a file-store group in `folder`, its key from `key` (by default the
    /// passphrase from the environment).
    static func options(
        _ folder: URL, group: String = "com.example.cachetool-tests", key: [String] = ["--passphrase-env", passphraseVariable]
    ) -> [String] {
        ["--store", "file", "--dir", folder.path, "--group", group] + key
    }

    static let environment = [passphraseVariable: "correct horse battery staple"]
}
