#if canImport(SecureTokenCachePostgres)
    import Testing
    import _ConnectionPoolModule

    @testable import SecureTokenCache
    @testable import SecureTokenCachePostgres

    /// The errors postgres-nio throws, as the store reports them. No server needed.
    @Suite(.timeLimit(.minutes(1)))
    struct PostgresErrorTranslationTests {
        /// After failing to connect for a while, the client's pool fails every request at once
        /// with an error of its own (not a `PSQLError`): the database is unavailable, so the
        /// outage policy applies, and nothing calls it a failure of the request itself.
        @Test func thePoolGivingUpOnConnectingIsAnOutage() {
            let error = PostgresRowDatabase.translate(ConnectionPoolError.connectionCreationCircuitBreakerTripped)
            #expect(error.code == .databaseUnavailable)
            #expect(error.message.contains("check that it is running and reachable"))
        }

        /// Anything else the client throws that is neither a `PSQLError` nor the pool's is a
        /// failure named by its type.
        @Test func otherClientErrorsKeepTheirCodes() {
            struct Unexpected: Error {}
            let unexpected = PostgresRowDatabase.translate(Unexpected())
            #expect(unexpected.code == .databaseFailure)
            #expect(unexpected.message.contains("Unexpected"))
        }
    }
#endif
