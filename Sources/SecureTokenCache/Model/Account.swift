/// An account entry (`Account` section): one user in one tenant of one cloud.
///
/// A guest user has one `Account` per tenant, all with the same ``homeAccountId``.
public struct Account: Sendable, Hashable {
    /// The parsed members, shared by every copy: a copy of the entry is one retain.
    private final class Storage: Sendable {
        let members: EntryMembers
        let homeAccountId: HomeAccountId
        let environment: Environment
        let realm: String
        let localAccountId: String
        let username: String
        let authorityType: String
        let name: String?
        let usernameKey: HashedString

        init(members: EntryMembers, parts: borrowing EntryParts) {
            self.members = members
            homeAccountId = parts.accountHomeAccountId()
            environment = parts.environment()
            realm = parts.string(.realm) ?? ""
            localAccountId = parts.string(.localAccountId) ?? ""
            username = parts.string(.username) ?? ""
            authorityType = parts.string(.authorityType) ?? ""
            name = parts.string(.name)
            usernameKey = parts.lowercasedKey(.username)
        }
    }

    private let storage: Storage

    /// Every member of the entry as stored.
    public var fields: JSONObject { storage.members.object }
    /// The members as held: the record payload the entry was read from, or an object.
    var members: EntryMembers { storage.members }

    /// The user across tenants and apps.
    public var homeAccountId: HomeAccountId { storage.homeAccountId }

    /// The cloud host.
    public var environment: Environment { storage.environment }

    /// The tenant of this account entry.
    public var realm: String { storage.realm }

    /// The user's id in this tenant (`oid`, else `sub`).
    public var localAccountId: String { storage.localAccountId }

    /// The sign-in name (`preferred_username`, else `upn`); may be empty.
    public var username: String { storage.username }

    /// `MSSTS`, `ADFS`, `MSA`, `AAD` or `Other`.
    public var authorityType: String { storage.authorityType }

    /// The display name, when the SDK stored one.
    public var name: String? { storage.name }
    /// The username, lower-cased, with its hash: what the index files the account under.
    var usernameKey: HashedString { storage.usernameKey }

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
        [fields.string("home_account_id") ?? "", fields.string("environment") ?? "", realm].joined(separator: "-").lowercased()
    }
}

extension Account {
    /// Whether this account is known only from a migrated ADAL cache: its home account id is a
    /// synthetic one (`adal-legacy-…`) until the first silent acquisition replaces it by the
    /// real one from `client_info`. See ``CacheGroup/importADAL(_:)``.
    public var isLegacy: Bool { homeAccountId.normalised.hasPrefix(ADALCache.legacyPrefix) }
}
