/// An access token entry (`AccessToken` section).
///
/// The typed properties are read from ``fields``, which holds every member as stored, unknown
/// ones included, in their original order; writing the entry back writes ``fields``.
public struct AccessToken: Sendable, Hashable {
    /// The parsed members, shared by every copy: a copy of the entry is one retain.
    private final class Storage: Sendable {
        let members: EntryMembers
        let secret: String
        let homeAccountId: HomeAccountId?
        let environment: Environment
        let clientId: String
        let realm: String
        let scopes: Scopes
        let cachedAt: Int64?
        let expiresOn: Int64
        let extendedExpiresOn: Int64?
        let refreshOn: Int64?
        let tokenType: String
        let keyId: String?
        let extCacheKey: String?
        let bucket: AccessTokenBucket

        init(members: EntryMembers, parts: borrowing EntryParts) {
            self.members = members
            secret = parts.string(.secret) ?? ""
            homeAccountId = parts.credentialHomeAccountId()
            environment = parts.environment()
            clientId = parts.string(.clientId) ?? ""
            realm = parts.string(.realm) ?? ""
            scopes = parts.grantedScopes()
            cachedAt = parts.seconds(.cachedAt)
            expiresOn = parts.seconds(.expiresOn) ?? 0
            extendedExpiresOn = parts.seconds(.extendedExpiresOn) ?? parts.seconds(.extExpiresOn)
            refreshOn = parts.seconds(.refreshOn)
            let type = parts.string(.tokenType) ?? ""
            tokenType = type.isEmpty ? "Bearer" : type
            keyId = parts.string(.keyId)
            extCacheKey = parts.extCacheKey()
            bucket = AccessTokenBucket(parts: parts, account: homeAccountId, environment: environment)
        }
    }

    private let storage: Storage

    /// Every member of the entry as stored.
    public var fields: JSONObject { storage.members.object }
    /// The members as held: the record payload the entry was read from, or an object.
    var members: EntryMembers { storage.members }

    /// The token itself. Never log it.
    public var secret: String { storage.secret }

    /// The user the token is for; `nil` for app-only tokens.
    public var homeAccountId: HomeAccountId? { storage.homeAccountId }

    /// The cloud host the token came from.
    public var environment: Environment { storage.environment }

    /// The client (application) id the token was issued to.
    public var clientId: String { storage.clientId }

    /// The tenant the token is for.
    public var realm: String { storage.realm }

    /// The granted scopes (`target`).
    public var scopes: Scopes { storage.scopes }

    /// When the token was cached, in Unix seconds.
    public var cachedAt: Int64? { storage.cachedAt }

    /// When the token expires, in Unix seconds.
    public var expiresOn: Int64 { storage.expiresOn }

    /// When the token's extended lifetime ends, in Unix seconds (`extended_expires_on`, or
    /// `ext_expires_on` as some SDKs write it).
    public var extendedExpiresOn: Int64? { storage.extendedExpiresOn }

    /// When the SDK should proactively refresh the token, in Unix seconds.
    public var refreshOn: Int64? { storage.refreshOn }

    /// `Bearer` (the default), `pop` or `ssh-cert`.
    public var tokenType: String { storage.tokenType }

    /// The key the token is bound to (PoP, SSH certificates).
    public var keyId: String? { storage.keyId }

    /// The extended cache key that isolates tokens of one request shape.
    public var extCacheKey: String? { storage.extCacheKey }

    /// Where the index files the token (computed once, when the entry is read).
    var bucket: AccessTokenBucket { storage.bucket }

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

    /// Whether the token is expired at `now`, counting `margin` seconds before `expires_on` as
    /// expired (MSAL uses 300 s).
    public func isExpired(at now: Int64, margin: Int64 = 300) -> Bool { expiresOn <= now + margin }

    /// Whether `refresh_on` has passed: the token is valid but should be renewed.
    public func shouldRefresh(at now: Int64) -> Bool {
        guard let refreshOn else { return false }
        return refreshOn <= now
    }

    /// The key msal-python 1.39.0 files this entry under.
    public var msalKey: String {
        var parts = [
            fields.string("home_account_id") ?? "", fields.string("environment") ?? "",
            extCacheKey == nil ? "AccessToken" : "atext", clientId, realm, fields.string("target") ?? "",
        ]
        if let extCacheKey { parts.append(extCacheKey) }
        return parts.joined(separator: "-").lowercased()
    }
}
