import SecureTokenCache

/// How one ``GroupEntry`` reads in a listing, in both forms: the human table's cells and the
/// `--json` object carry the same values under the same names, in the same order.
struct EntryView {
    let entry: GroupEntry
    let now: Int64

    /// The kinds `list tokens` shows.
    static let tokenKinds: Set<CredentialKind> = [.accessToken, .refreshToken, .idToken]

    var scopesText: String { entry.scopes?.values.joined(separator: " ") ?? "" }
    var expiresInText: String { TimeText.expiresIn(entry.expiresOn, now: now) }

    // MARK: Entries (tokens, app metadata)

    static let entryHeaders = [
        "ID", "KIND", "ACCOUNT", "CLIENT", "REALM", "ENVIRONMENT", "SCOPES", "EXPIRES IN", "FAMILY", "SECRET",
    ]

    /// The ACCOUNT cell: the user's name, or `(app)` for an app-only access token (client
    /// credentials), which belongs to no user; an on-behalf-of token's is marked `(obo)`, as
    /// only the holder of its assertion is served it.
    var accountText: String {
        switch entry.holder {
        case .onBehalfOf?: entry.username.map { "(obo) \($0)" } ?? "(obo)"
        case .app?: "(app)"
        default: entry.username ?? ""
        }
    }

    var entryCells: [String] {
        [
            entry.id, entry.kind.rawValue, accountText, entry.clientId ?? "", entry.realm ?? "", entry.environment,
            scopesText, expiresInText, entry.familyId ?? "", entry.secretFingerprint ?? "",
        ]
    }

    var entryJSON: JSONValue {
        var object: JSONObject = [
            "id": .string(entry.id),
            "kind": .string(entry.kind.rawValue),
            "account": .optional(entry.username),
            "homeAccountId": .optional(entry.homeAccountId?.rawValue),
            "clientId": .optional(entry.clientId),
            "realm": .optional(entry.realm),
            "environment": .string(entry.environment),
            "scopes": entry.scopes.map { .array($0.values.map(JSONValue.string)) } ?? .null,
            "expiresOn": .optional(entry.expiresOn),
        ]
        object["expiresIn"] = entry.expiresOn.map { .integer($0 - now) } ?? .null
        object["expired"] = entry.expiresOn.map { .bool($0 <= now) } ?? .null
        object["familyId"] = .optional(entry.familyId)
        object["secretFingerprint"] = .optional(entry.secretFingerprint)
        object["key"] = .string(entry.key)
        return .object(object)
    }

    // MARK: Accounts

    static let accountHeaders = ["ID", "USERNAME", "HOME ACCOUNT ID", "ENVIRONMENT", "REALM", "AUTHORITY TYPE"]

    var authorityType: String { entry.fields["authority_type"]?.stringValue ?? "" }

    var accountCells: [String] {
        [
            entry.id, entry.username ?? "", entry.homeAccountId?.rawValue ?? "", entry.environment, entry.realm ?? "",
            authorityType,
        ]
    }

    var accountJSON: JSONValue {
        .object([
            "id": .string(entry.id),
            "username": .optional(entry.username),
            "homeAccountId": .optional(entry.homeAccountId?.rawValue),
            "environment": .string(entry.environment),
            "realm": .optional(entry.realm),
            "authorityType": .string(authorityType),
            "key": .string(entry.key),
        ])
    }
}
