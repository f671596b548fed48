import CSodium

/// A 32-byte symmetric key in libsodium guarded memory: `sodium_malloc` (guard pages, `mlock`ed),
/// made read-only with `mprotect` once initialised, and wiped by `sodium_free` when the owner
/// goes away.
///
/// Non-copyable, so the bytes exist exactly once; they are never copied into a Swift array or
/// string. Read them only through ``withUnsafeBytes(_:)``; the pointer must not escape.
/// `@unchecked Sendable` is sound because the bytes never change after `init`.
struct SecretKey: ~Copyable, @unchecked Sendable {
    /// The length of every key: XChaCha20-Poly1305's key size.
    static let byteCount = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)

    private let storage: UnsafeMutableRawPointer

    /// A key whose bytes `initialize` writes straight into guarded memory. If `initialize` throws,
    /// the memory is wiped and freed and the error is rethrown.
    init(initializingWith initialize: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        try Sodium.ensureInitialised()
        guard let pointer = sodium_malloc(Self.byteCount) else {
            throw TokenCacheError(.cryptoFailure, "could not allocate guarded memory for a key (sodium_malloc failed)")
        }
        // Bind once, so later `assumingMemoryBound(to: UInt8.self)` views are valid: memory from C
        // is untyped, and reading it as bytes without binding it first is undefined behaviour.
        pointer.bindMemory(to: UInt8.self, capacity: Self.byteCount)
        do {
            try initialize(UnsafeMutableRawBufferPointer(start: pointer, count: Self.byteCount))
        } catch {
            sodium_free(pointer)
            throw error
        }
        sodium_mprotect_readonly(pointer)
        storage = pointer
    }

    /// A fresh random key (`crypto_aead_xchacha20poly1305_ietf_keygen`).
    init() throws {
        try self.init { buffer in
            crypto_aead_xchacha20poly1305_ietf_keygen(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// A copy of `bytes`, which must be ``byteCount`` long. The caller should wipe its own copy.
    init(copying bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count == Self.byteCount else {
            throw TokenCacheError(.invalidArgument, "a key must be \(Self.byteCount) bytes, not \(bytes.count)")
        }
        try self.init { buffer in buffer.copyMemory(from: bytes) }
    }

    /// The key Argon2id (`crypto_pwhash`, `crypto_pwhash_ALG_ARGON2ID13`) derives from `passphrase`
    /// with `salt` (``Argon2idParameters/saltByteCount`` bytes) and `parameters`.
    init(passphrase: String, salt: [UInt8], parameters: Argon2idParameters) throws {
        guard salt.count == Argon2idParameters.saltByteCount else {
            throw TokenCacheError(.invalidArgument, "an Argon2id salt must be \(Argon2idParameters.saltByteCount) bytes")
        }
        try parameters.validate()
        guard !passphrase.isEmpty else { throw TokenCacheError(.invalidArgument, "the passphrase is empty") }
        var utf8 = Array(passphrase.utf8)
        defer { Sodium.wipe(&utf8) }
        try self.init { buffer in
            let result = utf8.withUnsafeBufferPointer { pass in
                salt.withUnsafeBufferPointer { salt in
                    pass.withMemoryRebound(to: CChar.self) { pass in
                        crypto_pwhash(
                            buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(buffer.count),
                            pass.baseAddress!, UInt64(pass.count),
                            salt.baseAddress!,
                            parameters.opsLimit, Int(parameters.memLimit),
                            crypto_pwhash_ALG_ARGON2ID13
                        )
                    }
                }
            }
            guard result == 0 else {
                throw TokenCacheError(
                    .cryptoFailure,
                    "Argon2id could not derive a key (out of memory?)",
                    underlying: .sodium(function: "crypto_pwhash", returnCode: result)
                )
            }
        }
    }

    /// Scoped read access to the key bytes; the pointer must not escape `body`.
    func withUnsafeBytes<R: ~Copyable, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: storage, count: Self.byteCount))
    }

    deinit {
        sodium_free(storage)  // lifts the protection, zeroes, unmaps
    }
}
