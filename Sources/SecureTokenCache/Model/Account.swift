/// An account entry (`Account` section): one user in one tenant of one cloud.
///
/// A guest user has one `Account` per tenant, all with the same ``homeAccountId``.
public struct Account: Sendable, Hashable {
    /// The parsed members, shared by every copy: a copy of the entry is one retain.
    private final class Storage: Sendable {
        let fields: JSONObject
        let homeAccountId: HomeAccountId
        let environment: Environment
        let realm: String
        let localAccountId: String
        let username: String
        let authorityType: String
        let name: String?

        init(fields: JSONObject) {
            self.fields = fields
            homeAccountId = HomeAccountId(fields.string("home_account_id") ?? "")
            environment = Environment(fields.string("environment") ?? "")
            realm = fields.string("realm") ?? ""
            localAccountId = fields.string("local_account_id") ?? ""
            username = fields.string("username") ?? ""
            authorityType = fields.string("authority_type") ?? ""
            name = fields.string("name")
        }
    }

    private let storage: Storage

    /// Every member of the entry as stored.
    public var fields: JSONObject { storage.fields }

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

    /// An entry from its stored members.
    public init(fields: JSONObject) {
        storage = Storage(fields: fields)
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
