import Dispatch
import Glibc
import SecureTokenCache
import Synchronization

/// A thread of its own on which the database's async work runs (a `TaskExecutor`), so that the
/// synchronous store seam can wait for it.
///
/// The engine's reads and writes are synchronous, and a caller may be on one of the cooperative
/// pool's few threads (two on two cores). Waiting there for a task that itself needs a pool thread
/// (the client's connection pool, a query's continuation) would deadlock once every pool thread
/// waits. Every task this file starts prefers this thread instead, so the waiting and the work
/// never compete for the same threads. The work is short hops between SwiftNIO's event loops; the
/// thread only runs the glue.
final class DatabaseThread: TaskExecutor, @unchecked Sendable {
    // `@unchecked`: `jobs` is guarded by its mutex and `ready` is a semaphore; nothing else changes.
    private let jobs = Mutex<[UnownedJob]>([])
    private let ready = DispatchSemaphore(value: 0)
    /// The thread's id, to refuse a wait from the thread itself (it would wait for itself).
    private let threadID = Atomic<UInt>(0)

    /// Starts the thread; it lives as long as the process.
    init() {
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(
            &thread, nil,
            { box in
                let this = Unmanaged<DatabaseThread>.fromOpaque(box!).takeRetainedValue()
                this.threadID.store(UInt(pthread_self()), ordering: .releasing)
                this.runForever()
            }, box)
        precondition(status == 0, "could not start the database thread (pthread_create: \(status))")
        pthread_detach(thread)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        ready.signal()
    }

    private func runForever() -> Never {
        let executor = asUnownedTaskExecutor()
        while true {
            ready.wait()
            let job = jobs.withLock { $0.removeFirst() }
            job.runSynchronously(on: executor)
        }
    }

    /// Runs `operation` on this thread and waits for its result, at most `timeout`; then the
    /// operation is cancelled and ``TokenCacheError/Code/databaseUnavailable`` thrown.
    func wait<T: Sendable>(
        timeout: Duration, _ what: @autoclosure () -> String, _ operation: @escaping @Sendable () async throws -> T
    ) throws -> T {
        precondition(threadID.load(ordering: .acquiring) != UInt(pthread_self()), "the database thread waited for itself")
        let outcome = Outcome<T>()
        let task = Task(executorPreference: self) { outcome.finish(await Self.result(of: operation)) }
        guard outcome.done.wait(timeout: .now() + .nanoseconds(Int(timeout.nanoseconds))) == .success else {
            task.cancel()
            throw TokenCacheError(
                .databaseUnavailable,
                "the database did not answer within \(timeout) while \(what()); check that it is running and reachable, then retry"
            )
        }
        return try outcome.result()
    }

    static func result<T>(of operation: () async throws -> T) async -> Result<T, any Error> {
        do { return .success(try await operation()) } catch { return .failure(error) }
    }

    /// A result one side finishes and the other waits for.
    final class Outcome<T: Sendable>: Sendable {
        let done = DispatchSemaphore(value: 0)
        private let value = Mutex<Result<T, any Error>?>(nil)

        func finish(_ result: Result<T, any Error>) {
            value.withLock { $0 = result }
            done.signal()
        }

        func result() throws -> T { try value.withLock { $0! }.get() }
    }
}

extension Duration {
    /// The duration in whole nanoseconds (saturating).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : product &+ attoseconds / 1_000_000_000
    }
}
