import ArgumentParser
import SecureTokenCache

#if canImport(SecureTokenCachePostgres)
    import SecureTokenCachePostgres

    extension GlobalOptions {
        /// Opens the group in the database of `--url` (`existing`: only if it is there, creating
        /// nothing). Throws as `CacheGroup.open(_:postgres:configuration:)` does.
        func openInPostgres(_ configuration: CacheConfiguration, existing: Bool) throws -> CacheGroup {
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
