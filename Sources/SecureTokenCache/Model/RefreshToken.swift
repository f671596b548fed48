/// A refresh token entry (`RefreshToken` section); a family refresh token when ``familyId`` is set.
///
/// The typed properties are read from ``fields``, which holds every member as stored, unknown
/// ones included, in their original order; writing the entry back writes ``fields``. Two entries
/// are equal when their ``fields`` are.
public struct RefreshToken: Sendable, Hashable, EntryModel {
    /// The members the properties return, parsed once when the entry is read: one value per
    /// property of the same name, those every credential has in `credential`.
    struct Parsed: ParsedMembers {
        let credential: CredentialMembers
        let familyId: String?
        let target: String?
        let lastModificationTime: Int64?
        let clientKey: HashedString
        let familyKey: HashedString?
        let userAssertionHash: String?
        let assertionKey: HashedString?

        init(_ parts: borrowing EntryParts) {
            credential = CredentialMembers(parts)
            familyId = parts.familyId()
            target = parts.string(.target)
            lastModificationTime = parts.seconds(.lastModificationTime)
            clientKey = parts.lowercasedKey(.clientId)
            familyKey = familyId.map(HashedString.init)
            userAssertionHash = parts.assertionHash
            assertionKey = parts.assertionKey()
        }
    }

    /// The members and their parsed values, shared by every copy of the entry.
    let storage: EntryStorage<Parsed>

    /// The refresh token itself: it redeems new access tokens while it lives. Never log it.
    public var secret: String { parsed.credential.secret }
    /// The user the token is for.
    public var homeAccountId: HomeAccountId? { parsed.credential.homeAccountId }
    /// The cloud host the token came from.
    public var environment: Environment { parsed.credential.environment }
    /// The client id the token was issued to.
    public var clientId: String { parsed.credential.clientId }
    /// The FOCI family (`"1"`) when this is a family refresh token.
    public var familyId: String? { parsed.familyId }
    /// The scopes granted with the token (optional in the schema).
    public var target: String? { parsed.target }
    /// When the token was last written, in Unix seconds.
    public var lastModificationTime: Int64? { parsed.lastModificationTime }
    /// The client id, lower-cased, with its hash: what the index files the token under.
    var clientKey: HashedString { parsed.clientKey }
    /// The family id with its hash, when this is a family refresh token.
    var familyKey: HashedString? { parsed.familyKey }
    /// The key of a long-running on-behalf-of session this token belongs to
    /// (`user_assertion_hash`, as MSAL.NET stores it), as stored; `nil` for a user's own token,
    /// which is never redeemed for a session and the other way round.
    public var userAssertionHash: String? { parsed.userAssertionHash }
    /// The index key of ``userAssertionHash``.
    var assertionKey: HashedString? { parsed.assertionKey }

    /// Every member of the entry as stored.
    public var fields: JSONObject { members.object }

    /// The key msal-python 1.39.0 files this entry under.
    ///
    /// A long-running on-behalf-of session's token ends with the session key, as an on-behalf-of
    /// access token ends with its assertion hash: otherwise it would take the key of the user's
    /// own refresh token for the same client.
    public var msalKey: String {
        if assertionKey == nil, let key = payloadKey(.refreshToken) { return key }
        var parts = ["RefreshToken", clientId, "", target ?? ""]
        if let assertionKey { parts.append(assertionKey.value) }
        return userKey(parts)
    }
}

extension RefreshToken {
    /// An entry from its stored members.
    public init(fields: JSONObject) { self.init(object: fields) }
}
