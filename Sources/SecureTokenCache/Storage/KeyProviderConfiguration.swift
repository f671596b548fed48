import Glibc

/// Where a file-stored group's key comes from.
///
/// A group remembers which kind of key protects it (and, for a passphrase, the Argon2id salt and
/// limits); opening it with another kind, another passphrase or another key file fails with
/// ``TokenCacheError/Code/wrongKey``.
public enum KeyProviderConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// A passphrase; the key is derived from it with Argon2id.
    case passphrase(String)
    /// A passphrase read from the named environment variable when the group is opened.
    case passphraseFromEnvironment(variable: String)
    /// A key file of 32 random bytes, mode `0600`; created when a new group is made and the file
    /// does not exist yet.
    case keyFile(path: String)

    /// Describes the configuration without revealing a passphrase.
    public var description: String {
        switch self {
        case .passphrase: "passphrase"
        case .passphraseFromEnvironment(let variable): "passphrase from $\(variable)"
        case .keyFile(let path): "key file \(path)"
        }
    }

    /// The provider for this configuration. `argon2id` sets the limits for new passphrase groups;
    /// `environment` looks variables up (the process environment unless a test passes its own).
    func makeProvider(
        argon2id: Argon2idParameters = .interactive,
        environment: (String) -> String? = { getenv($0).map { String(cString: $0) } }
    ) throws -> any KeyProvider {
        switch self {
        case .passphrase(let passphrase):
            return try PassphraseKeyProvider(passphrase: passphrase, parameters: argon2id)
        case .passphraseFromEnvironment(let variable):
            guard let value = environment(variable), !value.isEmpty else {
                throw TokenCacheError(.invalidArgument, "the environment variable \(variable) holds no passphrase")
            }
            return try PassphraseKeyProvider(passphrase: value, parameters: argon2id)
        case .keyFile(let path):
            return try KeyFileKeyProvider(path: path)
        }
    }
}
