/// An account entry (`Account` section): one user in one tenant of one cloud.
///
/// A guest user has one `Account` per tenant, all with the same ``homeAccountId``. The typed
/// properties are read from ``fields``, which holds every member as stored; two entries are
/// equal when their ``fields`` are.
public struct Account: Sendable, Hashable, EntryModel {
    /// The members the properties return, parsed once when the entry is read: one value per
    /// property of the same name.
    struct Parsed: ParsedMembers {
        let homeAccountId: HomeAccountId
        let environment: Environment
        let realm: String
        let localAccountId: String
        let username: String
        let authorityType: String
        let name: String?
        let usernameKey: HashedString

        init(_ parts: borrowing EntryParts) {
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

    /// The members and their parsed values, shared by every copy of the entry.
    let storage: EntryStorage<Parsed>

    /// The user across tenants and apps.
    public var homeAccountId: HomeAccountId { parsed.homeAccountId }

    /// The cloud host.
    public var environment: Environment { parsed.environment }

    /// The tenant of this account entry.
    public var realm: String { parsed.realm }

    /// The user's id in this tenant (`oid`, else `sub`).
    public var localAccountId: String { parsed.localAccountId }

    /// The sign-in name (`preferred_username`, else `upn`); may be empty.
    public var username: String { parsed.username }

    /// `MSSTS`, `ADFS`, `MSA`, `AAD` or `Other`.
    public var authorityType: String { parsed.authorityType }

    /// The display name, when the SDK stored one.
    public var name: String? { parsed.name }
    /// The username, lower-cased, with its hash: what the index files the account under.
    var usernameKey: HashedString { parsed.usernameKey }

    /// Every member of the entry as stored.
    public var fields: JSONObject { members.object }

    /// The key msal-python 1.39.0 files this entry under.
    public var msalKey: String { payloadKey(.account) ?? userKey([realm]) }
}

extension Account {
    /// An entry from its stored members.
    public init(fields: JSONObject) { self.init(object: fields) }
}

extension Account {
    /// Whether this account is known only from a migrated ADAL cache: its home account id is a
    /// synthetic one (`adal-legacy-…`) until the first silent acquisition replaces it by the
    /// real one from `client_info`. See ``CacheGroup/importADAL(_:)``.
    public var isLegacy: Bool { homeAccountId.normalised.hasPrefix(ADALCache.legacyPrefix) }
}
