/// An id token entry (`IdToken` section): the raw JWT the account's claims came from.
///
/// The typed properties are read from ``fields``, which holds every member as stored, unknown
/// ones included, in their original order; writing the entry back writes ``fields``.
public struct IdToken: Sendable, Hashable {
    /// The parsed members, shared by every copy: a copy of the entry is one retain.
    private final class Storage: Sendable {
        let members: EntryMembers
        let secret: String
        let homeAccountId: HomeAccountId?
        let environment: Environment
        let realm: String
        let clientId: String

        init(members: EntryMembers, parts: borrowing EntryParts) {
            self.members = members
            secret = parts.string(.secret) ?? ""
            homeAccountId = parts.credentialHomeAccountId()
            environment = parts.environment()
            realm = parts.string(.realm) ?? ""
            clientId = parts.string(.clientId) ?? ""
        }
    }

    private let storage: Storage

    /// Every member of the entry as stored.
    public var fields: JSONObject { storage.members.object }
    /// The members as held: the record payload the entry was read from, or an object.
    var members: EntryMembers { storage.members }
    /// The raw JWT. It holds personal data; never log it.
    public var secret: String { storage.secret }
    /// The user the token is for.
    public var homeAccountId: HomeAccountId? { storage.homeAccountId }
    /// The cloud host the token came from.
    public var environment: Environment { storage.environment }
    /// The tenant the token is for.
    public var realm: String { storage.realm }
    /// The client id the token was issued to.
    public var clientId: String { storage.clientId }

    /// An entry from its stored members.
    public init(fields: JSONObject) {
        self.init(members: .object(fields), parts: EntryParts(fields))
    }

    /// An entry from its stored members, with their known ones already picked out.
    init(members: EntryMembers, parts: borrowing EntryParts) {
        storage = Storage(members: members, parts: parts)
    }

    /// Whether two values are equal (see the type's doc for what is compared).
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.storage === rhs.storage || lhs.fields == rhs.fields }
    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(fields) }

    /// The key msal-python 1.39.0 files this entry under.
    public var msalKey: String {
        [fields.string("home_account_id") ?? "", fields.string("environment") ?? "", "IdToken", clientId, realm, ""]
            .joined(separator: "-").lowercased()
    }
}
