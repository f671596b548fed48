/// The one rule for group names. A name becomes a folder name, part of a hidden folder's name
/// and a keyring attribute value, so it keeps to an alphabet that is safe in all three.
enum GroupName {
    /// Checks that `name` is 1-200 characters of `A-Z a-z 0-9 . _ -`, not starting with a dot.
    ///
    /// - Throws: ``TokenCacheError/Code/invalidArgument`` otherwise, with an example of a good name.
    static func validate(_ name: String) throws {
        let allowed = name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard allowed, !name.isEmpty, name.utf8.count <= 200, !name.hasPrefix(".") else {
            throw TokenCacheError(
                .invalidArgument,
                "a group name uses letters, digits, '.', '_' and '-' only (at most 200, not starting with '.'), such as com.example.apps"
            )
        }
    }
}
