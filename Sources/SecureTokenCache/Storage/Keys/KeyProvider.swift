/// Where a file group's key comes from: one conforming type per ``CacheConfiguration/KeySource``
/// kind (``PassphraseKeyProvider``, ``KeyFileKeyProvider``, ``KeyringKeyProvider``).
///
/// A provider makes the key of a new group (and says, as a ``HeaderKeySource``, what the group's
/// header must record to find it again), and yields the key of an existing group from that
/// record. Whether the key is the right one is not the provider's business: the store checks it
/// against the header's key check and reports ``TokenCacheError/Code/wrongKey``.
protocol KeyProvider: Sendable {
    /// The protection the keys from this provider give.
    var protectionLevel: ProtectionLevel { get }

    /// The key for a new group with id `groupID` (16 random bytes) and name `groupName`, and the
    /// ``HeaderKeySource`` to store in its header. May create what the key needs (a salt, a key
    /// file, a keyring item).
    func makeKey(groupID: [UInt8], groupName: String) throws -> ProvidedKey

    /// The key of an existing group whose header records `source`. Throws
    /// ``TokenCacheError/Code/wrongKey`` if `source` is not this provider's kind.
    func key(for source: HeaderKeySource, groupID: [UInt8], groupName: String) throws -> SecretKey
}

extension KeyProvider {
    /// The error for a header whose key source is not this provider's: always
    /// ``TokenCacheError/Code/wrongKey``, naming both kinds and never a secret.
    func mismatch(_ source: HeaderKeySource) -> TokenCacheError {
        TokenCacheError(
            .wrongKey,
            "this group is \(source.protectionLevel), not \(protectionLevel); open it with the matching key configuration"
        )
    }
}
