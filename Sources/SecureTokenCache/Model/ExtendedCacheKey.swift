import CSodium

/// The extended cache key of a token requested with extra parameters that set it apart (such as
/// msal-python's `fmi_path`), computed as msal-python 1.39.0 and the Go SDK compute it: each
/// component, sorted by name, as `<bytes>:<name><bytes>:<value>`, concatenated, hashed with
/// SHA-256, base64url without padding, lower-cased. Tokens with a key answer only requests with
/// the same components, and a request with none never finds them.
enum ExtendedCacheKey {
    /// The key of `components` (empty values left out); `nil` when none is left.
    static func of(_ components: [String: String]) -> String? {
        let kept = components.filter { !$0.value.isEmpty }
        guard !kept.isEmpty else { return nil }
        // Python's sorted() on str: by code point.
        let names = kept.keys.sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }
        var text = ""
        for name in names {
            let value = kept[name] ?? ""
            text += "\(name.utf8.count):\(name)\(value.utf8.count):\(value)"
        }
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        var bytes = Array(text.utf8)
        _ = crypto_hash_sha256(&digest, &bytes, UInt64(bytes.count))
        return Base64URL.encode(digest).asciiLowercased
    }
}
