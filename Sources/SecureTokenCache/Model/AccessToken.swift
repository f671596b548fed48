/// An access token entry (`AccessToken` section).
///
/// The typed properties are read from ``fields``, which holds every member as stored, unknown
/// ones included, in their original order; writing the entry back writes ``fields``. Two entries
/// are equal when their ``fields`` are.
public struct AccessToken: Sendable, Hashable, EntryModel {
    /// The members the properties return, parsed once when the entry is read: one value per
    /// property of the same name, those every credential has in `credential`.
    struct Parsed: ParsedMembers {
        let credential: CredentialMembers
        let realm: String
        let scopes: Scopes
        let cachedAt: Int64?
        let expiresOn: Int64
        let extendedExpiresOn: Int64?
        let refreshOn: Int64?
        let tokenType: String
        let keyId: String?
        let extCacheKey: String?
        let userAssertionHash: String?
        let assertionKey: HashedString?
        let bucket: AccessTokenBucket

        init(_ parts: borrowing EntryParts) {
            credential = CredentialMembers(parts)
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
            userAssertionHash = parts.assertionHash
            assertionKey = parts.assertionKey()
            bucket = AccessTokenBucket(parts: parts, account: credential.homeAccountId, environment: credential.environment)
        }
    }

    /// The members and their parsed values, shared by every copy of the entry.
    let storage: EntryStorage<Parsed>

    /// The access token itself, as the authority issued it. Never log it.
    public var secret: String { parsed.credential.secret }

    /// The user the token is for; `nil` for app-only tokens.
    public var homeAccountId: HomeAccountId? { parsed.credential.homeAccountId }

    /// The cloud host the token came from.
    public var environment: Environment { parsed.credential.environment }

    /// The client (application) id the token was issued to.
    public var clientId: String { parsed.credential.clientId }

    /// The tenant the token is for.
    public var realm: String { parsed.realm }

    /// The granted scopes (`target`).
    public var scopes: Scopes { parsed.scopes }

    /// When the token was cached, in Unix seconds.
    public var cachedAt: Int64? { parsed.cachedAt }

    /// When the token expires, in Unix seconds.
    public var expiresOn: Int64 { parsed.expiresOn }

    /// When the token's extended lifetime ends, in Unix seconds (`extended_expires_on`, or
    /// `ext_expires_on` as some SDKs write it).
    public var extendedExpiresOn: Int64? { parsed.extendedExpiresOn }

    /// When the SDK should proactively refresh the token, in Unix seconds.
    public var refreshOn: Int64? { parsed.refreshOn }

    /// `Bearer` (the default), `pop` or `ssh-cert`.
    public var tokenType: String { parsed.tokenType }

    /// The key the token is bound to (PoP, SSH certificates).
    public var keyId: String? { parsed.keyId }

    /// The extended cache key that isolates tokens of one request shape.
    public var extCacheKey: String? { parsed.extCacheKey }

    /// The hash of the user assertion an on-behalf-of token was obtained with
    /// (`user_assertion_hash`, or msal-node's `userAssertionHash`), as stored; `nil` for every
    /// other token. See ``UserAssertion``.
    public var userAssertionHash: String? { parsed.userAssertionHash }

    /// Where the index files the token (computed once, when the entry is read; the map of
    /// on-behalf-of tokens files one by ``assertionKey`` in place of the account).
    var bucket: AccessTokenBucket { parsed.bucket }

    /// The index key of ``userAssertionHash``.
    var assertionKey: HashedString? { parsed.assertionKey }

    /// Whether the token is expired at `now`, counting `margin` seconds before `expires_on` as
    /// expired (MSAL uses 300 s).
    public func isExpired(at now: Int64, margin: Int64 = 300) -> Bool { expiresOn <= now + margin }

    /// Whether `refresh_on` has passed: the token is valid but should be renewed.
    public func shouldRefresh(at now: Int64) -> Bool {
        guard let refreshOn else { return false }
        return refreshOn <= now
    }

    /// Every member of the entry as stored.
    public var fields: JSONObject { members.object }

    /// The key msal-python 1.39.0 files this entry under. An on-behalf-of token's key ends with
    /// its assertion hash: no SDK's key holds it (msal-python writes no such token), and without
    /// it two callers' tokens for the same user and scopes would take one key.
    public var msalKey: String {
        if extCacheKey == nil, assertionKey == nil, let key = payloadKey(.accessToken) { return key }
        let target = members.string(.target) ?? ""
        var parts = extCacheKey.map { ["atext", clientId, realm, target, $0] } ?? ["AccessToken", clientId, realm, target]
        if let assertionKey { parts.append(assertionKey.value) }
        return userKey(parts)
    }
}

extension AccessToken {
    /// An entry from its stored members.
    public init(fields: JSONObject) { self.init(object: fields) }
}
