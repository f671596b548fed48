import Foundation
import SecureTokenCache
import Testing

/// A store the persistence tests run against, and a fresh group in it.
enum StoreUnderTest: String, CaseIterable, Sendable, CustomStringConvertible {
    case file, keyring, postgres

    var description: String { rawValue }

    var isAvailable: Bool {
        switch self {
        case .file: FileStore.available
        case .keyring: KeyringStore.available
        case .postgres: PostgresDatabase.available
        }
    }

    /// What protects a group of this store as the tests open it: a key file where the group needs
    /// a key source of its own, so that no invocation stretches a passphrase (`FileStoreTests` and
    /// `PostgresCommandTests` open groups with one).
    var protection: String { self == .keyring ? "keyring" : "keyFile" }

    /// The stores this build and environment offer.
    static var available: [StoreUnderTest] { allCases.filter(\.isAvailable) }

    /// Global options and environment for a new, empty group in this store.
    func newGroup() throws -> (options: [String], environment: [String: String]) {
        switch self {
        case .file:
            let folder = try TestFiles.scratch()
            return (FileStore.options(folder, key: Self.keyFile(in: folder)), [:])
        case .keyring:
            return (["--store", "keyring", "--group", "com.example.cachetool-\(UUID().uuidString.lowercased())"], [:])
        case .postgres:
            return (
                [
                    "--store", "postgres", "--url", try PostgresDatabase.url(),
                    "--group", "com.example.cachetool-\(UUID().uuidString.lowercased())",
                ] + Self.keyFile(in: try TestFiles.scratch()), [:]
            )
        }
    }

    /// The option naming a key file in `folder`, which the first invocation makes with the group.
    private static func keyFile(in folder: URL) -> [String] {
        ["--key-file", folder.appendingPathComponent("group.key").path]
    }
}
