import Foundation
import SecureTokenCache
import Testing

/// A store the persistence tests run against, and a fresh group in it.
enum StoreUnderTest: String, CaseIterable, Sendable, CustomStringConvertible {
    case file, keyring

    var description: String { rawValue }

    var isAvailable: Bool { self == .file ? FileStore.available : KeyringStore.available }

    /// The stores this build and environment offer.
    static var available: [StoreUnderTest] { allCases.filter(\.isAvailable) }

    /// Global options and environment for a new, empty group in this store.
    func newGroup() throws -> (options: [String], environment: [String: String]) {
        switch self {
        case .file:
            return (FileStore.options(try TestFiles.scratch()), FileStore.environment)
        case .keyring:
            return (["--store", "keyring", "--group", "com.example.cachetool-\(UUID().uuidString.lowercased())"], [:])
        }
    }
}
