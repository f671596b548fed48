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

    /// What protects a group of this store as the tests open it.
    var protection: String { self == .keyring ? "keyring" : "passphrase" }

    /// The stores this build and environment offer.
    static var available: [StoreUnderTest] { allCases.filter(\.isAvailable) }

    /// Global options and environment for a new, empty group in this store.
    func newGroup() throws -> (options: [String], environment: [String: String]) {
        switch self {
        case .file:
            return (FileStore.options(try TestFiles.scratch()), FileStore.environment)
        case .keyring:
            return (["--store", "keyring", "--group", "com.example.cachetool-\(UUID().uuidString.lowercased())"], [:])
        case .postgres:
            return (
                [
                    "--store", "postgres", "--url", try PostgresDatabase.url(), "--passphrase-env", FileStore.passphraseVariable,
                    "--group", "com.example.cachetool-\(UUID().uuidString.lowercased())",
                ], FileStore.environment
            )
        }
    }
}
