import ArgumentParser
import SecureTokenCache

#if canImport(SecureTokenCachePostgres)
    import SecureTokenCachePostgres

    extension GlobalOptions {
        /// Opens the group in the database of `--url` (`existing`: only if it is there, creating
        /// nothing). Throws as `CacheGroup.open(_:postgres:configuration:)` does.
        ///
        /// A write that cannot reach the database fails: the library's default for apps keeps it
        /// in memory to write later, which a command that exits at once would never do, and it
        /// would report as done a clear or an import that never reached the database.
        func openInPostgres(_ configuration: CacheConfiguration, existing: Bool) throws -> CacheGroup {
            var configuration = configuration
            configuration.whenDatabaseUnavailable = .fail
            var database = try PostgresStoreConfiguration(url: url ?? "")
            if database.password == nil, let password = Console.environment("PGPASSWORD") { database.password = password }
            return existing
                ? try CacheGroup.openExisting(group, postgres: database, configuration: configuration)
                : try CacheGroup.open(group, postgres: database, configuration: configuration)
        }
    }
#else
    extension GlobalOptions {
        /// This build has no PostgreSQL store: says so.
        func openInPostgres(_ configuration: CacheConfiguration, existing: Bool) throws -> CacheGroup {
            throw TokenCacheError(
                .invalidArgument,
                "this cachetool was built without the PostgreSQL store (STC_WITHOUT_POSTGRES); build it without that")
        }
    }
#endif
