/// The part of a server's cache that holds one caller's tokens, named with the strings MSAL.NET
/// suggests as cache keys (`SuggestedCacheKey`), which Microsoft.Identity.Web fleets already
/// store their data under:
///
/// - an app's app-only tokens in one tenant: `{clientId}_{tenantId}_AppTokenCache`, or
///   `{clientId}_{tenantId}_{extCacheKey}_AppTokenCache` for tokens stored with an extended
///   cache key, and `{clientId}__AppTokenCache` for a token without a tenant;
/// - on-behalf-of tokens: the hash of the user assertion they were redeemed from (base64url of
///   its SHA-256 digest, without padding: the Go SDK's padded form names the same partition);
/// - a user's tokens, id tokens and accounts: the home account id, `uid.utid`.
///
/// Every entry but app metadata (which describes the client, whoever signs in) belongs to one
/// partition. A lookup looks only at its own partition's tokens, so its cost does not depend on
/// how many other partitions the group holds, and a partition whose last entry is removed is
/// gone: ``CacheGroup/partitions()`` never lists an empty one.
public struct CachePartition: Sendable, Hashable, CustomStringConvertible {
    /// Whose tokens the partition holds.
    public let holder: GroupEntry.Holder
    /// The partition's key, as MSAL.NET spells it.
    public let key: String

    private init(holder: GroupEntry.Holder, key: String) {
        self.holder = holder
        self.key = key
    }

    /// The partition of `clientId`'s app-only tokens in `tenantId` (`""` for none), stored with
    /// `extCacheKey` when one is given.
    public static func app(clientId: String, tenantId: String, extCacheKey: String? = nil) -> CachePartition {
        let parts = [clientId, tenantId] + (extCacheKey.flatMap { $0.isEmpty ? nil : [$0] } ?? [])
        return CachePartition(holder: .app, key: parts.joined(separator: "_") + "_AppTokenCache")
    }

    /// The partition of the on-behalf-of tokens redeemed from `assertion`.
    public static func onBehalfOf(_ assertion: UserAssertion) -> CachePartition {
        CachePartition(holder: .onBehalfOf, key: assertion.hash)
    }

    /// The on-behalf-of partition filed under an assertion key (``UserAssertion/key(of:)``: an
    /// assertion's hash or a long-running session's key, as the index files it).
    static func onBehalfOf(key: HashedString) -> CachePartition {
        CachePartition(holder: .onBehalfOf, key: key.value)
    }

    /// The partition of a user's tokens, id tokens and accounts.
    public static func user(_ homeAccountId: HomeAccountId) -> CachePartition {
        CachePartition(holder: .user, key: homeAccountId.rawValue)
    }

    /// The partitions a key given by a person may name (``isNamed(_:)``): an app's, or a user's
    /// and an on-behalf-of caller's (whose keys look alike).
    static func candidates(named key: String) -> [CachePartition] {
        if key.hasSuffix("_AppTokenCache") { return [CachePartition(holder: .app, key: key)] }
        return [.user(HomeAccountId(key)), CachePartition(holder: .onBehalfOf, key: assertionKey(key))]
    }

    /// The partition `entry` belongs to; `nil` for app metadata.
    init?(of entry: CacheEntry) {
        switch entry {
        case .accessToken(let token):
            if let session = Self.onBehalfOf(storedHash: token.userAssertionHash) {
                self = session
            } else if let home = token.homeAccountId {
                self = .user(home)
            } else {
                self = .app(clientId: token.clientId, tenantId: token.realm, extCacheKey: token.extCacheKey)
            }
        case .refreshToken(let token):
            // A long-running on-behalf-of session keeps its refresh token under the session key,
            // as parsed with the entry: the member the index files the token by, so the two agree,
            // and read without decoding every member (this runs for each entry a write puts).
            if let session = Self.onBehalfOf(storedHash: token.userAssertionHash) {
                self = session
            } else {
                self = .user(token.homeAccountId ?? HomeAccountId(""))
            }
        case .idToken(let token): self = .user(token.homeAccountId ?? HomeAccountId(""))
        case .account(let account): self = .user(account.homeAccountId)
        case .appMetadata: return nil
        }
    }

    /// The on-behalf-of partition of a token that stores `hash` as its `user_assertion_hash`;
    /// `nil` for none or an empty one (the token is then its user's or its app's).
    private static func onBehalfOf(storedHash hash: String?) -> CachePartition? {
        guard let hash, !hash.isEmpty else { return nil }
        return CachePartition(holder: .onBehalfOf, key: assertionKey(hash))
    }

    /// `key` as a partition key: an assertion hash without the padding the Go SDK writes.
    static func assertionKey(_ key: String) -> String {
        var text = Substring(key)
        while text.last == "=" { text.removeLast() }
        return text.isEmpty ? key : String(text)
    }

    /// Whether `key` names this partition: exactly, a home account id in any case (as users are
    /// compared), or an assertion hash as the Go SDK spells it.
    public func isNamed(_ key: String) -> Bool {
        switch holder {
        case _ where key == self.key: true
        case .user: key.lowercased() == self.key.lowercased()
        case .onBehalfOf: Self.assertionKey(key) == self.key
        case .app: false
        }
    }

    /// The holder and the key, such as `app 0f3c…_72f9…_AppTokenCache`. An assertion hash does
    /// not reveal the assertion.
    public var description: String { "\(holder.rawValue) \(key)" }

    /// How a store that keeps partitions apart names this one: the holder and the key,
    /// lower-cased, as partitions are compared (a home account id in any case is one user).
    var storageKey: String { "\(holder.rawValue) \(key.asciiLowercased)" }
}
