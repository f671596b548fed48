#if canImport(SecureTokenCachePostgres)
    import Glibc
    import Synchronization
    import Testing

    @testable import SecureTokenCache
    @testable import SecureTokenCachePostgres

    /// How a synchronous caller waits for the database's async work (``DatabaseThread``): the
    /// waiting thread runs the work's glue itself, and what comes after a timeout is finished by
    /// the database thread. No server needed.
    @Suite(.timeLimit(.minutes(1)))
    struct DatabaseThreadTests {
        /// The work starts on the waiting thread, and its answer comes back.
        @Test func theWaitingThreadRunsTheWork() throws {
            let thread = DatabaseThread()
            let caller = UInt(pthread_self())
            let ranOn = try thread.wait(timeout: .seconds(5), "a test") { () async -> UInt in
                UInt(pthread_self())
            }
            #expect(ranOn == caller)
            #expect(try thread.wait(timeout: .seconds(5), "a test") { 42 } == 42)
        }

        /// Work that outlives the wait: the caller gets `databaseUnavailable` at the timeout, and
        /// the work still finishes afterwards, on the database thread, whenever it resumes.
        @Test func workThatOutlivesItsTimeoutFinishesOnTheDatabaseThread() async throws {
            let thread = DatabaseThread()
            let finished = Atomic<Int>(0)
            for _ in 0..<20 {
                #expect(throws: TokenCacheError.self) {
                    try thread.wait(timeout: .milliseconds(10), "a test") {
                        try? await Task.sleep(for: .milliseconds(100))
                        finished.add(1, ordering: .relaxed)
                    }
                }
            }
            let deadline = ContinuousClock.now + .seconds(10)
            while finished.load(ordering: .relaxed) < 20, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(finished.load(ordering: .relaxed) == 20)
        }
    }
#endif
