import CSodium

/// libsodium's one-time initialisation. `sodium_init()` is thread-safe and idempotent; a
/// `static let` runs it lazily, once per process.
enum Sodium {
    private static let initResult: Int32 = sodium_init()

    /// Makes sure libsodium is initialised. Throws ``TokenCacheError/Code/cryptoFailure`` if it
    /// could not be (no entropy source, for instance).
    static func ensureInitialised() throws {
        guard initResult >= 0 else {
            throw TokenCacheError(
                .cryptoFailure,
                "libsodium could not be initialised",
                underlying: .sodium(function: "sodium_init", returnCode: initResult)
            )
        }
    }

    /// `count` random bytes from the system CSPRNG (for salts, nonces, group ids; never keys,
    /// which are generated straight into guarded memory by ``SecretKey``).
    static func randomBytes(_ count: Int) throws -> [UInt8] {
        try ensureInitialised()
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            randombytes_buf(buffer.baseAddress!, count)
            initialized = count
        }
    }

    /// Overwrites `bytes` with zeros in a way the optimiser cannot drop.
    static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { sodium_memzero(base, buffer.count) }
        }
    }

    /// An unkeyed BLAKE2b digest (`crypto_generichash`) of `bytes`, `outputCount` bytes long
    /// (16...64). Used for checksums of non-secret structures such as the group header.
    static func checksum(_ bytes: UnsafeRawBufferPointer, outputCount: Int = 32) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: outputCount) { out, initialized in
            _ = crypto_generichash(
                out.baseAddress!, outputCount,
                bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count),
                nil, 0
            )
            initialized = outputCount
        }
    }
}
