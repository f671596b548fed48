/// An id token entry (`IdToken` section): the raw JWT the account's claims came from.
public struct IdToken: Sendable, Hashable {
    /// Every member of the entry as stored.
    public let fields: JSONObject

    /// The raw JWT. It holds personal data; never log it.
    public let secret: String
    /// The user the token is for.
    public let homeAccountId: HomeAccountId?
    /// The cloud host the token came from.
    public let environment: Environment
    /// The tenant the token is for.
    public let realm: String
    /// The client id the token was issued to.
    public let clientId: String

    /// An entry from its stored members.
    public init(fields: JSONObject) {
        self.fields = fields
        secret = fields.string("secret") ?? ""
        homeAccountId = fields.string("home_account_id").flatMap { $0.isEmpty ? nil : HomeAccountId($0) }
        environment = Environment(fields.string("environment") ?? "")
        realm = fields.string("realm") ?? ""
        clientId = fields.string("client_id") ?? ""
    }

    /// The key msal-python 1.39.0 files this entry under.
    public var msalKey: String {
        [fields.string("home_account_id") ?? "", fields.string("environment") ?? "", "IdToken", clientId, realm, ""]
            .joined(separator: "-").lowercased()
    }
}
