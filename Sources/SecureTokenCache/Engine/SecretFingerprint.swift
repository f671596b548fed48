internal import CSodium

/// A short, stable, non-reversible tag for a secret, so a person can tell two tokens apart (or
/// see that one was replaced) without the secret being shown.
///
/// The fingerprint is the first 4 bytes of a keyed BLAKE2b-256 hash (libsodium's
/// `crypto_generichash`) of the secret's UTF-8 bytes, as 8 lower-case hex digits. The key is a
/// fixed, public domain-separation constant, so a fingerprint from this package can't be
/// mistaken for a plain hash of the secret made elsewhere. A fingerprint reveals nothing useful
/// about a high-entropy token; it is not meant for low-entropy secrets such as passwords.
public enum SecretFingerprint {
    /// The number of hex digits in a fingerprint.
    public static let length = 8

    /// Fixed domain-separation key (16 bytes, libsodium's minimum key size for generichash).
    private static let domain: [UInt8] = Array("stc.fingerprint1".utf8)

    private static let initialised: Int32 = sodium_init()

    /// The fingerprint of `secret`; the empty string for an empty secret (nothing to tag).
    public static func of(_ secret: String) -> String {
        guard !secret.isEmpty else { return "" }
        return of(bytes: Array(secret.utf8))
    }

    /// The fingerprint of arbitrary bytes, `hexDigits` long (at most 64).
    public static func of(bytes: [UInt8], hexDigits: Int = SecretFingerprint.length) -> String {
        // sodium_init picks the fastest BLAKE2b implementation for this CPU; libsodium asks for
        // it before any other call. It is thread-safe and idempotent; 1 means "already done".
        precondition(initialised >= 0, "sodium_init failed")
        var digest = [UInt8](repeating: 0, count: 32)
        let status = digest.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { input in
                domain.withUnsafeBufferPointer { key in
                    crypto_generichash(
                        out.baseAddress!, out.count, input.baseAddress, UInt64(input.count), key.baseAddress, key.count)
                }
            }
        }
        precondition(status == 0, "crypto_generichash failed with a valid output length")
        return String(hex(digest).prefix(max(0, hexDigits)))
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
