/// A refresh token entry (`RefreshToken` section); a family refresh token when ``familyId`` is set.
///
/// The typed properties are read from ``fields``, which holds every member as stored, unknown
/// ones included, in their original order; writing the entry back writes ``fields``.
public struct RefreshToken: Sendable, Hashable {
    /// The parsed members, shared by every copy: a copy of the entry is one retain.
    private final class Storage: Sendable {
        let members: EntryMembers
        let secret: String
        let homeAccountId: HomeAccountId?
        let environment: Environment
        let clientId: String
        let familyId: String?
        let target: String?
        let lastModificationTime: Int64?
        let clientKey: HashedString
        let familyKey: HashedString?

        init(members: EntryMembers, parts: borrowing EntryParts) {
            self.members = members
            secret = parts.string(.secret) ?? ""
            homeAccountId = parts.credentialHomeAccountId()
            environment = parts.environment()
            clientId = parts.string(.clientId) ?? ""
            familyId = parts.familyId()
            target = parts.string(.target)
            lastModificationTime = parts.seconds(.lastModificationTime)
            clientKey = parts.lowercasedKey(.clientId)
            familyKey = familyId.map(HashedString.init)
        }
    }

    private let storage: Storage

    /// Every member of the entry as stored.
    public var fields: JSONObject { storage.members.object }
    /// The members as held: the record payload the entry was read from, or an object.
    var members: EntryMembers { storage.members }
    /// The token itself. Never log it.
    public var secret: String { storage.secret }
    /// The user the token is for.
    public var homeAccountId: HomeAccountId? { storage.homeAccountId }
    /// The cloud host the token came from.
    public var environment: Environment { storage.environment }
    /// The client id the token was issued to.
    public var clientId: String { storage.clientId }
    /// The FOCI family (`"1"`) when this is a family refresh token.
    public var familyId: String? { storage.familyId }
    /// The scopes granted with the token (optional in the schema).
    public var target: String? { storage.target }
    /// When the token was last written, in Unix seconds.
    public var lastModificationTime: Int64? { storage.lastModificationTime }
    /// The client id, lower-cased, with its hash: what the index files the token under.
    var clientKey: HashedString { storage.clientKey }
    /// The family id with its hash, when this is a family refresh token.
    var familyKey: HashedString? { storage.familyKey }

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
        [fields.string("home_account_id") ?? "", fields.string("environment") ?? "", "RefreshToken", clientId, "", target ?? ""]
            .joined(separator: "-").lowercased()
    }
}
