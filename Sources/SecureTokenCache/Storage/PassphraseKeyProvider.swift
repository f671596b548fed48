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

    var protectionLevel: ProtectionLevel { .passphrase }

    func makeKey(groupID: [UInt8], groupName: String) throws -> ProvidedKey {
        let salt = try Sodium.randomBytes(Argon2idParameters.saltByteCount)
        let key = try SecretKey(passphrase: passphrase, salt: salt, parameters: parameters)
        return ProvidedKey(key: key, source: .passphrase(salt: salt, parameters: parameters))
    }

    func key(for source: KeySource, groupID: [UInt8], groupName: String) throws -> SecretKey {
        guard case .passphrase(let salt, let parameters) = source else { throw mismatch(source) }
        return try SecretKey(passphrase: passphrase, salt: salt, parameters: parameters)
    }
}
