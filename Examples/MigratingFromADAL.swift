import SecureTokenCache

/// MigratingFromADAL.md: an ADAL for Python cache into a group, then the first silent call.
func migratingFromADAL(adalCache: [UInt8]) async throws {
    let group = try CacheGroup.open()
    let imported = try group.importADAL(adalCache)  // all or nothing
    print("imported \(imported) entries")

    // Azure CLI's client id; ADAL's v1 resource is the v2 scope `<resource>/.default`.
    let cache = try TokenCache(clientId: "04b07795-8ddb-461a-bbee-02f9e1bf7b46", group: group)
    let management = Scopes(resource: "https://management.core.windows.net/")
    if let legacy = try cache.account(username: "alice@contoso.com") {
        let result = try await cache.acquireTokenSilently(scopes: management, account: legacy)
        print(legacy.isLegacy, result.account.isLegacy)  // true false: the account is unified now
    }
}
