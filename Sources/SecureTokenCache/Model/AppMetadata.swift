/// Per-client metadata (`AppMetadata` section): above all, whether the client is in a FOCI family.
public struct AppMetadata: Sendable, Hashable {
    /// Every member of the entry as stored.
    public let fields: JSONObject

    /// The client id.
    public let clientId: String
    /// The cloud host.
    public let environment: Environment
    /// `"1"` for the Microsoft family; `""` means "known not to be in a family"; `nil` means
    /// "not known yet".
    public let familyId: String?

    /// An entry from its stored members.
    public init(fields: JSONObject) {
        self.fields = fields
        clientId = fields.string("client_id") ?? ""
        environment = Environment(fields.string("environment") ?? "")
        familyId = fields.string("family_id")
    }

    /// The key msal-python 1.39.0 files this entry under (not lower-cased).
    public var msalKey: String {
        "appmetadata-\(fields.string("environment") ?? "")-\(clientId)"
    }
}
