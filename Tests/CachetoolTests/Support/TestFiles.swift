import Foundation
import SecureTokenCache
import TestSupport
import Testing

/// Files the tests share: msal-python's vectors, scratch folders.
enum TestFiles {
    static let vectorNames = ["v1_single_account", "v2_two_accounts_two_tenants", "v3_foci_two_clients"]

    /// A vector written by msal-python 1.39.0 (the copies the library's tests use).
    static func vector(_ name: String) -> URL {
        PackageRoot.url.appendingPathComponent("Tests/SecureTokenCacheTests/Fixtures/\(name).json")
    }

    /// Every `secret` value in an MSAL JSON file.
    static func secrets(in file: URL) throws -> [String] {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        var secrets: [String] = []
        for case let section as [String: Any] in document.values {
            for case let entry as [String: Any] in section.values {
                if let secret = entry["secret"] as? String, !secret.isEmpty { secrets.append(secret) }
            }
        }
        return secrets
    }

    /// One folder per test process for every scratch folder, removed when the process exits.
    static let scratchRoot: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cachetool-tests-\(getpid())-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(
            at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        atexit { try? FileManager.default.removeItem(at: TestFiles.scratchRoot) }
        return url
    }()

    /// A new empty folder, mode 0700.
    static func scratch() throws -> URL {
        let url = scratchRoot.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(
            at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return url
    }

    static func write(_ text: String, name: String = "input.json") throws -> URL {
        let url = try scratch().appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url
    }
}
