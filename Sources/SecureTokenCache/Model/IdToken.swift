/// An id token entry (`IdToken` section): the raw JWT the account's claims came from.
///
/// The typed properties are read from ``fields``, which holds every member as stored, unknown
/// ones included, in their original order; writing the entry back writes ``fields``. Two entries
/// are equal when their ``fields`` are.
public struct IdToken: Sendable, Hashable, EntryModel {
    /// The members the properties return, parsed once when the entry is read: one value per
    /// property of the same name, those every credential has in `credential`.
    struct Parsed: ParsedMembers {
        let credential: CredentialMembers
        let realm: String

        init(_ parts: borrowing EntryParts) {
            credential = CredentialMembers(parts)
            realm = parts.string(.realm) ?? ""
        }
    }

    /// The members and their parsed values, shared by every copy of the entry.
    let storage: EntryStorage<Parsed>

    /// The raw JWT. It holds personal data; never log it.
    public var secret: String { parsed.credential.secret }
    /// The user the token is for.
    public var homeAccountId: HomeAccountId? { parsed.credential.homeAccountId }
    /// The cloud host the token came from.
    public var environment: Environment { parsed.credential.environment }
    /// The tenant the token is for.
    public var realm: String { parsed.realm }
    /// The client id the token was issued to.
    public var clientId: String { parsed.credential.clientId }

    /// Every member of the entry as stored.
    public var fields: JSONObject { members.object }

    /// The key msal-python 1.39.0 files this entry under.
    public var msalKey: String { payloadKey(.idToken) ?? userKey(["IdToken", clientId, realm, ""]) }
}

extension IdToken {
    /// An entry from its stored members.
    public init(fields: JSONObject) { self.init(object: fields) }
}
