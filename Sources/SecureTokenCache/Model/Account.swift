/// An account entry (`Account` section): one user in one tenant of one cloud.
///
/// A guest user has one `Account` per tenant, all with the same ``homeAccountId``.
public struct Account: Sendable, Hashable {
    /// Every member of the entry as stored.
    public let fields: JSONObject

    /// The user across tenants and apps.
    public let homeAccountId: HomeAccountId
    /// The cloud host.
    public let environment: Environment
    /// The tenant of this account entry.
    public let realm: String
    /// The user's id in this tenant (`oid`, else `sub`).
    public let localAccountId: String
    /// The sign-in name (`preferred_username`, else `upn`); may be empty.
    public let username: String
    /// `MSSTS`, `ADFS`, `MSA`, `AAD` or `Other`.
    public let authorityType: String
    /// The display name, when the SDK stored one.
    public let name: String?

    /// An entry from its stored members.
    public init(fields: JSONObject) {
        self.fields = fields
        homeAccountId = HomeAccountId(fields.string("home_account_id") ?? "")
        environment = Environment(fields.string("environment") ?? "")
        realm = fields.string("realm") ?? ""
        localAccountId = fields.string("local_account_id") ?? ""
        username = fields.string("username") ?? ""
        authorityType = fields.string("authority_type") ?? ""
        name = fields.string("name")
    }

    /// The key msal-python 1.39.0 files this entry under.
    public var msalKey: String {
        [fields.string("home_account_id") ?? "", fields.string("environment") ?? "", realm].joined(separator: "-").lowercased()
    }
}
