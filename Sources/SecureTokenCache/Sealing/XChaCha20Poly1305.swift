import CSodium

/// XChaCha20-Poly1305 (IETF) authenticated encryption through libsodium.
///
/// A sealed box is `nonce (24 bytes) ‖ ciphertext ‖ tag (16 bytes)`; every seal draws a fresh
/// random nonce, which the 192-bit nonce makes safe without a counter.
enum XChaCha20Poly1305 {
    /// Nonce length.
    static let nonceByteCount = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    /// Authentication tag length.
    static let tagByteCount = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
    /// What sealing adds to a plaintext.
    static let overhead = nonceByteCount + tagByteCount

    /// Seals `plaintext` under `key`, authenticating `associatedData` too, and appends the box
    /// to `output`.
    static func seal(
        _ plaintext: UnsafeRawBufferPointer,
        using key: borrowing SecretKey,
        authenticating associatedData: UnsafeRawBufferPointer,
        appendingTo output: inout [UInt8]
    ) throws {
        try Sodium.ensureInitialised()
        let start = output.count
        let boxCount = plaintext.count + overhead
        output.append(contentsOf: repeatElement(0, count: boxCount))
        let result = output.withUnsafeMutableBytes { out in
            let nonce = out.baseAddress! + start
            randombytes_buf(nonce, nonceByteCount)
            return key.withUnsafeBytes { key in
                crypto_aead_xchacha20poly1305_ietf_encrypt(
                    (nonce + nonceByteCount).assumingMemoryBound(to: UInt8.self), nil,
                    plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                    associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count),
                    nil,
                    nonce.assumingMemoryBound(to: UInt8.self),
                    key.baseAddress!.assumingMemoryBound(to: UInt8.self)
                )
            }
        }
        guard result == 0 else {
            output.removeSubrange(start...)
            throw TokenCacheError(
                .cryptoFailure, "sealing failed",
                underlying: .sodium(function: "crypto_aead_xchacha20poly1305_ietf_encrypt", returnCode: result)
            )
        }
    }

    /// Opens a box made by ``seal(_:using:authenticating:appendingTo:)``. Returns `nil` when the
    /// box is too short or does not authenticate (tampered, wrong key or wrong associated data):
    /// the caller knows which error that is.
    static func open(
        _ box: UnsafeRawBufferPointer,
        using key: borrowing SecretKey,
        authenticating associatedData: UnsafeRawBufferPointer
    ) -> [UInt8]? {
        guard box.count >= overhead, (try? Sodium.ensureInitialised()) != nil else { return nil }
        let plainCount = box.count - overhead
        var ok = false
        let plaintext = [UInt8](unsafeUninitializedCapacity: plainCount) { out, initialized in
            let result = key.withUnsafeBytes { key in
                crypto_aead_xchacha20poly1305_ietf_decrypt(
                    out.baseAddress, nil,
                    nil,
                    (box.baseAddress! + nonceByteCount).assumingMemoryBound(to: UInt8.self),
                    UInt64(box.count - nonceByteCount),
                    associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count),
                    box.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    key.baseAddress!.assumingMemoryBound(to: UInt8.self)
                )
            }
            ok = result == 0
            initialized = ok ? plainCount : 0
        }
        return ok ? plaintext : nil
    }
}
