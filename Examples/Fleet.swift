#if canImport(SecureTokenCachePostgres)
    import SecureTokenCache
    import SecureTokenCachePostgres

    /// README.md, a fleet of server instances sharing one cache in PostgreSQL; the same sample
    /// is in the doc comments of `CacheGroup.open(_:postgres:configuration:)` and
    /// `PostgresStoreConfiguration`.
    func readmeFleet() async throws {
        let database = try PostgresStoreConfiguration(url: "postgres://tokens@db.internal:5432/tokens?sslmode=require")
        let group = try CacheGroup.open(
            "com.contoso.api", postgres: database,
            configuration: CacheConfiguration(keySource: .keyFile(path: "/etc/contoso/token-cache.key")))
        let cache = try TokenCache(clientId: "66666666-aaaa-4bbb-8ccc-000000000006", group: group)
        let client = ConfidentialClient(cache: cache, credentialKind: .secret)
        // Every instance: one token request for the fleet's first caller, hits for the rest, and a
        // sign-out on one instance reaches the others through LISTEN/NOTIFY.
        let graph = try await client.acquireAppToken(
            for: ["https://graph.microsoft.com/.default"],
            authority: try Authority("https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47"),
            credential: .secret("client secret from the vault"))
        send(authorization: "Bearer \(graph.token.secret)")
    }

    /// The article "Running a fleet on PostgreSQL": a bounded first level and the outage policy.
    func articleFleet() throws {
        let database = try PostgresStoreConfiguration(url: "postgres://tokens@db.internal:5432/tokens?sslmode=require")
        var configuration = CacheConfiguration(keySource: .keyFile(path: "/etc/contoso/token-cache.key"))
        configuration.memoryLimit = 64 << 20  // what this instance keeps in memory of the fleet's callers
        configuration.whenDatabaseUnavailable = .keepInMemory
        let group = try CacheGroup.open("com.contoso.api", postgres: database, configuration: configuration)
        let client = ConfidentialClient(
            cache: try TokenCache(clientId: "66666666-aaaa-4bbb-8ccc-000000000006", group: group), credentialKind: .secret)
        _ = client
    }
#endif
