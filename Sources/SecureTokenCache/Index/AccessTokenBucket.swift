/// Where access tokens of one account, cloud, tenant, client and token type are filed.
///
/// Every part carries its hash, made once where the part is made (an entry read from the store,
/// a `HomeAccountId`, an `Environment`, a `TokenCache`), so hashing a bucket combines six
/// integers instead of hashing the text of every part.
struct AccessTokenBucket: Hashable, Sendable {
    var account: HashedString
    var environment: HashedString
    var realm: HashedString
    var client: HashedString
    var tokenType: HashedString
    var extCacheKey: HashedString
}

extension AccessTokenBucket {
    /// The bucket of an access token with these members, whose user and cloud are already
    /// parsed: how the token files itself, and how opening a group files it without making it.
    init(parts: borrowing EntryParts, account: HomeAccountId?, environment: Environment) {
        let tokenType = parts.string(.tokenType) ?? ""
        self.init(
            account: account?.key ?? .empty,
            environment: environment.groupKey,
            realm: parts.lowercasedKey(.realm),
            client: parts.lowercasedKey(.clientId),
            tokenType: tokenType.isEmpty ? .bearer : parts.lowercasedKey(.tokenType),
            extCacheKey: parts.extCacheKeyFilingKey())
    }

    /// A bucket from its parts' text, each hashed here.
    init(account: String, environment: String, realm: String, client: String, tokenType: String, extCacheKey: String) {
        self.init(
            account: HashedString(account), environment: HashedString(environment), realm: HashedString(realm),
            client: HashedString(client), tokenType: HashedString(tokenType), extCacheKey: HashedString(extCacheKey))
    }
}

extension AccessTokenBucket: PrehashedKey {
    /// The parts' hashes, combined.
    var prehash: Int {
        var hash = HashMixer.combine(HashMixer.seed, account.prehash)
        hash = HashMixer.combine(hash, environment.prehash)
        hash = HashMixer.combine(hash, realm.prehash)
        hash = HashMixer.combine(hash, client.prehash)
        hash = HashMixer.combine(hash, tokenType.prehash)
        return HashMixer.combine(hash, extCacheKey.prehash)
    }
}

extension AccessTokenBucket: FilingKey {
    /// The bucket of account, cloud, realm, client, token type and extended cache key, in that
    /// order.
    init(filingParts part: (Int) -> HashedString) {
        self.init(
            account: part(0), environment: part(1), realm: part(2), client: part(3), tokenType: part(4), extCacheKey: part(5))
    }
}
