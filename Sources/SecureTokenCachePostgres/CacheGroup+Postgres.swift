public import SecureTokenCache

extension CacheGroup {
    /// Opens group `name` in a PostgreSQL database that every instance of a fleet shares,
    /// creating the library's tables and the group when they do not exist.
    ///
    /// Each record is a row of its own, sealed with the group's key (``CacheConfiguration/keySource``,
    /// required, and the same on every instance) and named by a keyed hash: the database holds no
    /// token, user name, tenant, client id or scope in clear, and a row moved elsewhere fails to
    /// open. Lookups answer from this process's memory, as with every store; another instance's
    /// commit reaches it through PostgreSQL's `LISTEN`/`NOTIFY`, after which lookups see it.
    /// The process opens one connection pool per database, whatever the number of groups.
    ///
    /// With a ``CacheConfiguration/memoryLimit`` the process keeps in memory only the partitions
    /// (``CachePartition``: a user, an app's tenant, an on-behalf-of caller) its lookups ask for:
    /// a lookup that misses loads its partition in one round trip, and the least recently used
    /// partitions are dropped from memory to stay under the limit. Without one it keeps the whole
    /// group. Group-wide reads (``TokenCache/accounts()``, ``exportMSAL(includeSecrets:)``, ...)
    /// see what the process keeps.
    ///
    /// ```swift
    /// let database = try PostgresStoreConfiguration(url: "postgres://tokens@db.internal:5432/tokens?sslmode=require")
    /// let group = try CacheGroup.open(
    ///     "com.contoso.api", postgres: database,
    ///     configuration: CacheConfiguration(keySource: .keyFile(path: "/etc/contoso/token-cache.key")))
    /// ```
    ///
    /// - Throws: `TokenCacheError`: `.invalidArgument` without a key source; `.databaseUnavailable` when the database cannot be reached within
    ///   ``PostgresStoreConfiguration/timeout``; `.databaseFailure` when it refuses (login,
    ///   rights); `.unsupportedFormat` when a newer version of the library made its tables;
    ///   `.wrongKey` when the key does not open the group.
    public static func open(
        _ name: String, postgres: PostgresStoreConfiguration, configuration: CacheConfiguration
    ) throws -> CacheGroup {
        let database = try PostgresRowDatabase.shared(postgres, logger: configuration.logger)
        return try open(name, database: database, configuration: configuration, idlePartitionAge: postgres.idlePartitionAge)
    }

    /// Opens group `name` in a PostgreSQL database only if it is there: for a tool that reads or
    /// removes (`cachetool status`, `list`, `clear`, `export`), which must never create tables or
    /// a group, and should say a mistyped name or an empty database is not there.
    ///
    /// - Throws: `TokenCacheError`: `.notFound` when the database has no token cache tables or no
    ///   such group (nothing is created); `.unsupportedFormat` for tables of a newer version, or
    ///   older than the oldest this version uses as they are; and
    ///   what ``open(_:postgres:configuration:)`` throws.
    public static func openExisting(
        _ name: String, postgres: PostgresStoreConfiguration, configuration: CacheConfiguration
    ) throws -> CacheGroup {
        let database = try PostgresRowDatabase.shared(postgres, creatingTables: false, logger: configuration.logger)
        var existing = configuration
        existing.opensExistingOnly = true
        do {
            return try open(name, database: database, configuration: existing, idlePartitionAge: postgres.idlePartitionAge)
        } catch let error as TokenCacheError where error.code == .notFound {
            throw TokenCacheError(.notFound, "there is no group \(name) in \(postgres); nothing was created")
        }
    }
}
