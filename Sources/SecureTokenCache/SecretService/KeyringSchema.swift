internal import CLibsecret

/// A libsecret `SecretSchema` built with `secret_schema_newv`, and the Swift-side check of every
/// attribute set passed to libsecret with it.
///
/// libsecret checks attributes with `g_return_val_if_fail`: on a mismatch it only prints
/// `libsecret-CRITICAL … invalid X attribute` and returns FALSE/NULL without a GError, which
/// would read as "stored" or "not found". So every call validates here first.
/// Immutable after `init`, hence safe to share between threads.
final class KeyringSchema: @unchecked Sendable {
    /// The schema of this package's items: the group and the item's role, nothing else.
    static let group = KeyringSchema(name: "org.securetokencache.Group", attributes: ["group", "role"])

    /// The schema name, stored by libsecret as the `xdg:schema` attribute of every item.
    let name: String
    /// The (string) attributes the schema declares.
    let attributeNames: Set<String>
    /// Whether lookups, searches and deletions match the schema name too. Stores write the
    /// `xdg:schema` attribute either way; without matching, an item is found by its other
    /// attributes alone, whatever schema name it carries (`SECRET_SCHEMA_DONT_MATCH_NAME`).
    let matchesName: Bool
    /// The `SecretSchema *`, owned.
    let pointer: UnsafeMutablePointer<SecretSchema>

    /// A schema named `name` whose attributes are all strings; `matchesName: false` makes it
    /// find items by their attributes alone, as the MSAL.NET, msal4j and Go extensions do.
    init(name: String, attributes: [String], matchesName: Bool = true) {
        self.name = name
        attributeNames = Set(attributes)
        self.matchesName = matchesName
        let types = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, nil)!
        defer { g_hash_table_unref(types) }
        for attribute in attributes {
            // SECRET_SCHEMA_ATTRIBUTE_STRING is 0, so this inserts NULL, which is what libsecret wants.
            g_hash_table_insert(types, g_strdup(attribute), CLibsecret_attribute_type(SECRET_SCHEMA_ATTRIBUTE_STRING))
        }
        pointer = secret_schema_newv(name, matchesName ? SECRET_SCHEMA_NONE : SECRET_SCHEMA_DONT_MATCH_NAME, types)
    }

    deinit { secret_schema_unref(pointer) }

    /// Checks attributes before they reach libsecret.
    ///
    /// - Parameter complete: `true` when every declared attribute must be present (store, lookup
    ///   and clear address exactly one item); `false` for searches, which need at least one.
    /// - Throws: ``TokenCacheError/Code/invalidArgument`` for an undeclared attribute, a missing
    ///   one, an empty value, or a value with a NUL character (C would silently cut it there).
    func validate(_ attributes: [String: String], complete: Bool) throws {
        let unknown = Set(attributes.keys).subtracting(attributeNames)
        guard unknown.isEmpty else {
            throw TokenCacheError(.invalidArgument, "attributes \(unknown.sorted()) are not declared by the \(name) schema")
        }
        if complete {
            let missing = attributeNames.subtracting(attributes.keys)
            guard missing.isEmpty else {
                throw TokenCacheError(.invalidArgument, "attributes \(missing.sorted()) of the \(name) schema are missing")
            }
        } else if attributes.isEmpty {
            throw TokenCacheError(.invalidArgument, "a search needs at least one attribute of the \(name) schema")
        }
        for (key, value) in attributes where value.isEmpty || value.utf8.contains(0) {
            throw TokenCacheError(.invalidArgument, "attribute \(key) must be a non-empty string without NUL characters")
        }
    }

    /// Runs `body` with a `GHashTable` (char * → char *) holding copies of `attributes`.
    func withAttributeTable<R: ~Copyable>(_ attributes: [String: String], _ body: (OpaquePointer) throws -> R) rethrows -> R {
        let table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)!
        defer { g_hash_table_unref(table) }
        for (key, value) in attributes {
            g_hash_table_insert(table, g_strdup(key), g_strdup(value))
        }
        return try body(table)
    }
}
