/// An access token entry (`AccessToken` section).
///
/// The typed properties are read from ``fields``, which holds every member as stored, unknown
/// ones included, in their original order; writing the entry back writes ``fields``.
public struct AccessToken: Sendable, Hashable {
    /// The parsed members, shared by every copy: a copy of the entry is one retain.
    private final class Storage: Sendable {
        let fields: JSONObject
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

        init(fields: JSONObject) {
            self.fields = fields
            secret = fields.string("secret") ?? ""
            homeAccountId = fields.string("home_account_id").flatMap { $0.isEmpty ? nil : HomeAccountId($0) }
            environment = Environment(fields.string("environment") ?? "")
            clientId = fields.string("client_id") ?? ""
            realm = fields.string("realm") ?? ""
            scopes = Scopes(target: fields.string("target") ?? "")
            cachedAt = fields.seconds("cached_at")
            expiresOn = fields.seconds("expires_on") ?? 0
            extendedExpiresOn = fields.seconds("extended_expires_on") ?? fields.seconds("ext_expires_on")
            refreshOn = fields.seconds("refresh_on")
            let type = fields.string("token_type") ?? ""
            tokenType = type.isEmpty ? "Bearer" : type
            keyId = fields.string("key_id")
            extCacheKey = fields.string("ext_cache_key").flatMap { $0.isEmpty ? nil : $0 }
        }
    }

    private let storage: Storage

    /// Every member of the entry as stored.
    public var fields: JSONObject { storage.fields }

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

    /// An entry from its stored members.
    public init(fields: JSONObject) {
        storage = Storage(fields: fields)
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
