/// The five kinds of entry in an MSAL unified cache, named as their JSON sections are.
public enum CredentialKind: String, Sendable, Hashable, CaseIterable, Comparable {
    /// An access token (`AccessToken` section).
    case accessToken = "AccessToken"
    /// An account (`Account` section).
    case account = "Account"
    /// An id token (`IdToken` section).
    case idToken = "IdToken"
    /// A refresh token, possibly a family refresh token (`RefreshToken` section).
    case refreshToken = "RefreshToken"
    /// Per-client metadata such as the FOCI family (`AppMetadata` section).
    case appMetadata = "AppMetadata"

    /// The section name msal-python writes.
    public var sectionName: String { rawValue }

    /// The kind a JSON section holds, accepting other SDKs' spellings (`IDToken`, any case).
    public init?(sectionName: String) {
        if let kind = CredentialKind(rawValue: sectionName) {
            self = kind
            return
        }
        switch sectionName.asciiLowercased {
        case "accesstoken": self = .accessToken
        case "account": self = .account
        case "idtoken": self = .idToken
        case "refreshtoken": self = .refreshToken
        case "appmetadata": self = .appMetadata
        default: return nil
        }
    }

    /// The order msal-python creates sections in (`TokenCache.__add`).
    var creationOrder: Int {
        switch self {
        case .accessToken: 0
        case .account: 1
        case .idToken: 2
        case .refreshToken: 3
        case .appMetadata: 4
        }
    }

    /// Orders kinds as msal-python creates their sections.
    public static func < (lhs: CredentialKind, rhs: CredentialKind) -> Bool { lhs.creationOrder < rhs.creationOrder }
}

extension JSONObject {
    /// A member that is a string (or a number, read as its literal), else `nil`.
    func string(_ name: String) -> String? {
        switch self[name] {
        case .string(let text): text
        case .number(let literal): literal
        default: nil
        }
    }

    /// A member holding whole seconds, as a decimal string or a JSON number.
    func seconds(_ name: String) -> Int64? { self[name]?.integerValue }
}
