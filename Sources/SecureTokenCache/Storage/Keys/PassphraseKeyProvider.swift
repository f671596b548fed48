/// Keys derived from a passphrase with Argon2id; the salt and limits live in the group header.
struct PassphraseKeyProvider: KeyProvider {
    private let passphrase: String
    /// The Argon2id limits for new groups (existing groups use the limits in their header).
    let parameters: Argon2idParameters

    /// A provider for `passphrase`. `parameters` applies to groups it creates; tests pass
    /// ``Argon2idParameters/minimum`` to stay fast.
    init(passphrase: String, parameters: Argon2idParameters = .interactive) throws {
        guard !passphrase.isEmpty else { throw TokenCacheError(.invalidArgument, "the passphrase is empty") }
        try parameters.validate()
        self.passphrase = passphrase
        self.parameters = parameters
    }

    /// Always ``ProtectionLevel/passphrase``.
    var protectionLevel: ProtectionLevel { .passphrase }

    /// Derives a new group's key from the passphrase with a fresh random salt and ``parameters``,
    /// and records both (they are public) for the header.
    func makeKey(groupID: [UInt8], groupName: String) throws -> ProvidedKey {
        let salt = try Sodium.randomBytes(Argon2idParameters.saltByteCount)
        let key = try SecretKey(passphrase: passphrase, salt: salt, parameters: parameters)
        return ProvidedKey(key: key, source: .passphrase(salt: salt, parameters: parameters))
    }

    /// Derives the key again with the salt and limits the header records. Throws
    /// ``TokenCacheError/Code/wrongKey`` for a header that records another kind of key; a wrong
    /// passphrase yields a key the header's key check refuses.
    func key(for source: HeaderKeySource, groupID: [UInt8], groupName: String) throws -> SecretKey {
        guard case .passphrase(let salt, let parameters) = source else { throw mismatch(source) }
        return try SecretKey(passphrase: passphrase, salt: salt, parameters: parameters)
    }
}
