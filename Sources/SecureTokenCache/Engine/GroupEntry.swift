/// One entry of a group as an administrator sees it: what it is, whose it is, for which client,
/// and until when, with its secret reduced to a fingerprint (for `cachetool list` and `show`).
///
/// ``fields`` still holds every stored member, the secret included: print it only when a person
/// asked for the secret.
public struct GroupEntry: Sendable, Hashable {
    /// A short identifier, stable for as long as the entry stays under the same key: a kind
    /// prefix (`at`, `rt`, `id`, `acct`, `app`) and 12 hex digits derived from the key.
    public let id: String
    /// The kind of entry.
    public let kind: CredentialKind
    /// The key the entry is filed under in MSAL JSON, exactly as it came (another SDK's key
    /// shape stays as it was).
    public let key: String
    /// The user the entry belongs to; `nil` for app metadata and app-only tokens.
    public let homeAccountId: HomeAccountId?
    /// The user's sign-in name, from the entry itself (accounts) or from the group's account
    /// entry for ``homeAccountId``; `nil` when the group has none.
    public let username: String?
    /// The client id the entry was issued to or describes; `nil` for accounts.
    public let clientId: String?
    /// The tenant; `nil` for refresh tokens and app metadata.
    public let realm: String?
    /// The cloud host.
    public let environment: String
    /// The granted scopes of an access or refresh token; `nil` for other kinds or when the
    /// refresh token has no `target`.
    public let scopes: Scopes?
    /// When an access token expires, in Unix seconds; `nil` for other kinds.
    public let expiresOn: Int64?
    /// The FOCI family of a refresh token or app metadata (`""` in app metadata means "known not
    /// to be in a family"); `nil` when none is recorded.
    public let familyId: String?
    /// The secret's ``SecretFingerprint``; `nil` for kinds without a secret.
    public let secretFingerprint: String?
    /// Every member as stored, in order, the secret included.
    public let fields: JSONObject
    /// The partition the entry belongs to; `nil` for app metadata.
    public let partition: CachePartition?

    /// Whether this is an on-behalf-of token: an access token that carries the hash of the user
    /// assertion it was redeemed from, and answers only that assertion's holder, or a refresh
    /// token of a long-running on-behalf-of session, which renews only that session.
    public var isOnBehalfOf: Bool {
        (kind == .accessToken || kind == .refreshToken)
            && UserAssertion.memberNames.contains { !(fields.string($0) ?? "").isEmpty }
    }

    /// Whom a token is for, as a server's cache tells its tokens apart.
    public enum Holder: String, Sendable, Hashable, CaseIterable {
        /// A user: a desktop or web app's sign-in (refresh, id and access tokens, accounts).
        case user
        /// The app itself: an app-only access token (client credentials).
        case app
        /// A web API's caller: an on-behalf-of access token, served only for its assertion.
        case onBehalfOf = "obo"
    }

    /// Whom this entry is for: ``Holder/app`` for an app-only access token,
    /// ``Holder/onBehalfOf`` for an on-behalf-of one and a long-running session's refresh token,
    /// ``Holder/user`` for the other tokens and accounts; `nil` for app metadata, which is no
    /// one's.
    public var holder: Holder? {
        switch kind {
        case .appMetadata: nil
        case _ where isOnBehalfOf: .onBehalfOf
        case .accessToken where homeAccountId == nil: .app
        default: .user
        }
    }

    /// The kind prefix of ``id``.
    public static func idPrefix(_ kind: CredentialKind) -> String {
        switch kind {
        case .accessToken: "at"
        case .refreshToken: "rt"
        case .idToken: "id"
        case .account: "acct"
        case .appMetadata: "app"
        }
    }

    /// The short id of the entry of `kind` filed under `key`.
    public static func id(kind: CredentialKind, key: String) -> String {
        idPrefix(kind) + "-" + SecretFingerprint.of(bytes: Array("\(kind.rawValue)\u{0}\(key)".utf8), hexDigits: 12)
    }

    init(_ stored: StoredEntry, username: String?) {
        id = Self.id(kind: stored.id.kind, key: stored.id.key)
        kind = stored.id.kind
        key = stored.id.key
        fields = stored.entry.fields
        partition = CachePartition(of: stored.entry)
        self.username = username
        switch stored.entry {
        case .accessToken(let token):
            homeAccountId = token.homeAccountId
            clientId = token.clientId
            realm = token.realm
            environment = token.environment.host
            scopes = token.scopes
            expiresOn = token.expiresOn
            familyId = nil
            secretFingerprint = SecretFingerprint.of(token.secret)
        case .refreshToken(let token):
            homeAccountId = token.homeAccountId
            clientId = token.clientId
            realm = nil
            environment = token.environment.host
            scopes = token.target.map { Scopes(target: $0) }
            expiresOn = nil
            familyId = token.familyId
            secretFingerprint = SecretFingerprint.of(token.secret)
        case .idToken(let token):
            homeAccountId = token.homeAccountId
            clientId = token.clientId
            realm = token.realm
            environment = token.environment.host
            scopes = nil
            expiresOn = nil
            familyId = nil
            secretFingerprint = SecretFingerprint.of(token.secret)
        case .account(let account):
            homeAccountId = account.homeAccountId
            clientId = nil
            realm = account.realm
            environment = account.environment.host
            scopes = nil
            expiresOn = nil
            familyId = nil
            secretFingerprint = nil
        case .appMetadata(let metadata):
            homeAccountId = nil
            clientId = metadata.clientId
            realm = nil
            environment = metadata.environment.host
            scopes = nil
            expiresOn = nil
            familyId = metadata.familyId
            secretFingerprint = nil
        }
    }
}
