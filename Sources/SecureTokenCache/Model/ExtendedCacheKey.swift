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

    /// The key of the components MSAL.NET stores on an access token (`ext`, an object of
    /// strings). MSAL.NET hashes them its own way (names and values run together without
    /// lengths), so the key in its entry's name never equals this one; reading the components
    /// themselves files its token under the key msal-python and Go give the same components,
    /// so a request with them finds it and a request without them never does. `nil` for
    /// anything but an object with a member of text.
    static func of(dotNet value: JSONValue) -> String? {
        guard case .object(let object) = value else { return nil }
        var components: [String: String] = [:]
        for member in object.members {
            switch member.value {
            case .string(let text), .number(let text): components[member.key] = text
            default: continue
            }
        }
        return of(components)
    }
}
