/// Migration from ADAL for Python caches.
extension CacheGroup {
    /// Migrates an ADAL for Python token cache (a JSON list such as Azure CLI's old
    /// `~/.azure/accessTokens.json`) into the group, in one transaction, all or nothing.
    ///
    /// - Each refresh token becomes a refresh token of the unified model for its client and
    ///   a *legacy* account (``Account/isLegacy``): ADAL never knew the home account id, so the
    ///   account is filed under a synthetic one keyed by cloud, user name (UPN,
    ///   case-insensitive) and tenant until the first silent acquisition replaces it by the real account.
    ///   ``TokenCache/account(username:)`` finds it.
    /// - Each access token still valid now becomes an access token for
    ///   `Scopes(resource:)` (`<resource>/.default`), in the realm of the id token's tenant
    ///   (ADAL's `tenantId`; else the authority's tenant), in the environment of the
    ///   authority's host.
    ///
    /// ```swift
    /// let imported = try group.importADAL(adalCache)  // all or nothing
    /// print("imported \(imported) entries")
    /// ```
    ///
    /// See <doc:MigratingFromADAL>.
    ///
    /// - Returns: the number of unified entries written (refresh tokens of one user and client
    ///   that ADAL repeats per resource count once).
    /// - Throws: `TokenCacheError` `.malformedCache` naming the offending entry's index (never
    ///   a value) when the file is not a list of objects, an entry lacks `_clientId`,
    ///   `_authority`, the `userId` of a refresh token, or an access token's `resource` or a
    ///   readable `expiresOn`; nothing is imported then.
    @discardableResult
    public func importADAL(_ json: some Collection<UInt8>) throws -> Int {
        let entries = try ADALCache.migrate(json, now: clock())
        return try write { transaction in
            var written = Set<EntryID>()
            for entry in entries { written.insert(transaction.put(entry)) }
            return written.count
        }
    }
}
