import CSodium

/// The cost of an Argon2id passphrase derivation. Stored in a group's header (with the salt), so
/// a group keeps opening with the parameters it was created with.
struct Argon2idParameters: Sendable, Hashable {
    /// Passes over memory (`opslimit`).
    var opsLimit: UInt64
    /// Memory in bytes (`memlimit`).
    var memLimit: UInt64

    /// The length of the random salt stored next to the parameters.
    static let saltByteCount = Int(crypto_pwhash_SALTBYTES)

    /// libsodium's interactive limits (64 MiB of memory): the default for new groups.
    static let interactive = Argon2idParameters(
        opsLimit: UInt64(crypto_pwhash_OPSLIMIT_INTERACTIVE),
        memLimit: UInt64(crypto_pwhash_MEMLIMIT_INTERACTIVE)
    )

    /// libsodium's minimum limits: insecure, for tests only (they keep tests fast).
    static let minimum = Argon2idParameters(
        opsLimit: UInt64(crypto_pwhash_OPSLIMIT_MIN),
        memLimit: UInt64(crypto_pwhash_MEMLIMIT_MIN)
    )

    /// The strongest limits a header may ask for; more is treated as a damaged header rather than
    /// letting a file make us allocate unbounded memory.
    static let maximumMemLimit: UInt64 = 4 << 30

    /// Throws ``TokenCacheError/Code/invalidArgument`` unless libsodium accepts these limits.
    func validate() throws {
        guard opsLimit >= UInt64(crypto_pwhash_OPSLIMIT_MIN), opsLimit <= 64,
            memLimit >= UInt64(crypto_pwhash_MEMLIMIT_MIN), memLimit <= Self.maximumMemLimit
        else {
            throw TokenCacheError(.invalidArgument, "Argon2id limits out of range (ops \(opsLimit), memory \(memLimit) bytes)")
        }
    }
}
