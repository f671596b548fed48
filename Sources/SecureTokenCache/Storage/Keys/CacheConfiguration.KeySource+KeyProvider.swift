import Glibc

extension CacheConfiguration.KeySource {
    /// The provider for this source: the one place where a configured key source becomes a
    /// ``KeyProvider``.
    ///
    /// - Parameters:
    ///   - group: the group whose key is wanted (the keyring key item is the group's).
    ///   - configuration: where the keyring group's coordination folder is, whether the Secret
    ///     Service may prompt, and how long to wait for the keyring group's lock.
    ///   - argon2id: the Argon2id limits for new passphrase groups (existing groups use the limits
    ///     in their header); tests pass ``Argon2idParameters/minimum`` to stay fast.
    ///   - readOnly: the provider only yields the keys of existing groups, creating nothing and
    ///     taking no lock (the keyring's: ``KeyringKeyProvider/existingKey(group:options:)``).
    ///   - environment: looks variables up (the process environment unless a test passes its own,
    ///     since `setenv` races with other threads' `getenv`).
    /// - Throws: ``TokenCacheError/Code/invalidArgument`` for an empty passphrase, key file path
    ///   or environment variable; the Secret Service's availability errors for the keyring.
    func makeProvider(
        group: String,
        configuration: CacheConfiguration,
        argon2id: Argon2idParameters = .interactive,
        readOnly: Bool = false,
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
        case .keyring where readOnly:
            return try KeyringKeyProvider.existingKey(group: group, options: CacheGroup.keyringOptions(configuration))
        case .keyring:
            return try KeyringKeyProvider(
                group: group, options: CacheGroup.keyringOptions(configuration), root: CacheGroup.fileRoot(configuration),
                lockTimeout: configuration.lockTimeout)
        }
    }
}
