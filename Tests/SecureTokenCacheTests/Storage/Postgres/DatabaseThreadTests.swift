#if canImport(SecureTokenCachePostgres)
    import Foundation
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
        /// What the threads of ``aWaiterOutlivesAnEnqueueThatFinishesAfterTheWait()`` share: the
        /// waiter, held weakly, whether the test has let its own reference go, and the task's
        /// continuation.
        final class ObservedWaiter: @unchecked Sendable {
            // `@unchecked`: `waiter` is a weak reference, read and written atomically.
            weak var waiter: DatabaseThread.Waiter?
            let released = Atomic<Bool>(false)
            let done = Atomic<Bool>(false)
            let continuation = Mutex<UnsafeContinuation<Void, Never>?>(nil)
            let queuedByOtherThread = DispatchSemaphore(value: 0)
        }

        /// The work starts on the waiting thread, and its answer comes back.
        @Test func theWaitingThreadRunsTheWork() throws {
            let thread = DatabaseThread(name: "stc-db-test")
            let caller = UInt(pthread_self())
            let ranOn = try thread.wait(timeout: .seconds(5), "a test") { () async -> UInt in
                UInt(pthread_self())
            }
            #expect(ranOn == caller)
            #expect(try thread.wait(timeout: .seconds(5), "a test") { 42 } == 42)
        }

        /// A job enqueued from another thread while the waiting thread is busy is taken by the
        /// waiting thread before its signal is given, and that can be the task's last job: the
        /// wait returns and lets its waiter go while the enqueuing thread has still to signal it.
        /// The waiter stays alive until the enqueue is done: otherwise an event loop resuming a
        /// query's continuation would signal a freed waiter and crash the process.
        @Test func aWaiterOutlivesAnEnqueueThatFinishesAfterTheWait() throws {
            let thread = DatabaseThread(name: "stc-db-test")
            let observed = ObservedWaiter()
            let enqueues = Atomic<Int>(0)
            let aliveWhenSignalling = Mutex<Bool?>(nil)
            var waiter: DatabaseThread.Waiter? = DatabaseThread.Waiter(handingOverTo: thread) {
                // The third enqueue is the other thread's (the first two are the tasks' starts).
                // Once it is queued, it waits until the wait has returned and the test has let the
                // waiter go, then looks whether the waiter is still there to be signalled.
                guard enqueues.add(1, ordering: .relaxed).newValue == 3 else { return }
                observed.queuedByOtherThread.signal()
                while !observed.released.load(ordering: .acquiring) { usleep(1_000) }
                usleep(50_000)
                aliveWhenSignalling.withLock { $0 = observed.waiter != nil }
            }
            observed.waiter = waiter
            // No task handle is kept: a handle would keep its task, and the task its executor.
            _ = Task(executorPreference: waiter) { [waiter] in
                // Started on the waiting thread: a second task that keeps it busy while another
                // thread resumes this one, which then has its last job queued without a signal.
                _ = Task(executorPreference: waiter) {
                    Thread.detachNewThread {
                        observed.continuation.withLock { $0 }!.resume()
                    }
                    observed.queuedByOtherThread.wait()
                }
                await withUnsafeContinuation { resumed in observed.continuation.withLock { $0 = resumed } }
                observed.done.store(true, ordering: .releasing)
            }
            #expect(waiter!.serve(until: .now() + .seconds(10), or: { observed.done.load(ordering: .acquiring) }))
            waiter = nil
            observed.released.store(true, ordering: .releasing)
            let deadline = ContinuousClock.now + .seconds(10)
            while aliveWhenSignalling.withLock({ $0 }) == nil, ContinuousClock.now < deadline { usleep(1_000) }
            #expect(aliveWhenSignalling.withLock { $0 } == true)
            // Then it goes: nothing but the enqueue held it.
            while observed.waiter != nil, ContinuousClock.now < deadline { usleep(1_000) }
            #expect(observed.waiter == nil)
        }

        /// Work that outlives the wait: the caller gets `databaseUnavailable` at the timeout, and
        /// the work still finishes afterwards, on the database thread, whenever it resumes.
        @Test func workThatOutlivesItsTimeoutFinishesOnTheDatabaseThread() async throws {
            let thread = DatabaseThread(name: "stc-db-test")
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
