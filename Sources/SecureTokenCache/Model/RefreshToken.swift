/// A refresh token entry (`RefreshToken` section); a family refresh token when ``familyId`` is set.
public struct RefreshToken: Sendable, Hashable {
    /// Every member of the entry as stored.
    public let fields: JSONObject

    /// The token itself. Never log it.
    public let secret: String
    /// The user the token is for.
    public let homeAccountId: HomeAccountId?
    /// The cloud host the token came from.
    public let environment: Environment
    /// The client id the token was issued to.
    public let clientId: String
    /// The FOCI family (`"1"`) when this is a family refresh token.
    public let familyId: String?
    /// The scopes granted with the token (optional in the schema).
    public let target: String?
    /// When the token was last written, in Unix seconds.
    public let lastModificationTime: Int64?

    /// An entry from its stored members.
    public init(fields: JSONObject) {
        self.fields = fields
        secret = fields.string("secret") ?? ""
        homeAccountId = fields.string("home_account_id").flatMap { $0.isEmpty ? nil : HomeAccountId($0) }
        environment = Environment(fields.string("environment") ?? "")
        clientId = fields.string("client_id") ?? ""
        familyId = fields.string("family_id").flatMap { $0.isEmpty ? nil : $0 }
        target = fields.string("target")
        lastModificationTime = fields.seconds("last_modification_time")
    }

    /// The key msal-python 1.39.0 files this entry under.
    public var msalKey: String {
        [fields.string("home_account_id") ?? "", fields.string("environment") ?? "", "RefreshToken", clientId, "", target ?? ""]
            .joined(separator: "-").lowercased()
    }
}
