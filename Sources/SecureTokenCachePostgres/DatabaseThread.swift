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
/// thread only runs the glue. A caller that ``wait(timeout:_:_:)``s runs its own operation's glue
/// instead (``Waiter``), and this thread takes over what is left when it stops waiting.
final class DatabaseThread: TaskExecutor, @unchecked Sendable {
    // `@unchecked`: `jobs` is guarded by its mutex and `ready` is a semaphore; nothing else changes.
    /// Each job with the executor it was enqueued on: this thread's own, or a ``Waiter``'s that
    /// stopped waiting.
    private let jobs = Mutex<[(UnownedJob, UnownedTaskExecutor)]>([])
    private let ready = DispatchSemaphore(value: 0)
    /// The thread's id, to refuse a wait from the thread itself (it would wait for itself).
    private let threadID = Atomic<UInt>(0)

    /// The thread every database of the process runs its glue on: the glue is short hops, and a
    /// thread lives as long as the process, so one made for each database would outlive every
    /// database that failed to open (an app retrying through an outage would gain one a try).
    static let process = DatabaseThread()

    /// The process's thread's name, as `/proc/<pid>/task/<tid>/comm` shows it.
    static let name = "stc-database"

    /// glibc's `pthread_setname_np`, looked up once: it is declared only under `_GNU_SOURCE`, which
    /// the Glibc module is not built with, and other C libraries may not have it.
    private static let setName: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32)? = {
        guard let symbol = dlsym(nil, "pthread_setname_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32).self)
    }()

    /// The thread's name.
    let name: String

    /// Starts a thread named `name`; it lives as long as the process.
    init(name: String = DatabaseThread.name) {
        self.name = name
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(
            &thread, nil,
            { box in
                let this = Unmanaged<DatabaseThread>.fromOpaque(box!).takeRetainedValue()
                this.threadID.store(UInt(pthread_self()), ordering: .releasing)
                // Named for whoever looks at the process's threads (`top -H`, a debugger).
                _ = DatabaseThread.setName?(pthread_self(), this.name)
                this.runForever()
            }, box)
        precondition(status == 0, "could not start the database thread (pthread_create: \(status))")
        pthread_detach(thread)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        run(UnownedJob(job), on: asUnownedTaskExecutor())
    }

    /// Runs `job`, enqueued on `executor`, on this thread.
    private func run(_ job: UnownedJob, on executor: UnownedTaskExecutor) {
        jobs.withLock { $0.append((job, executor)) }
        ready.signal()
    }

    private func runForever() -> Never {
        while true {
            ready.wait()
            let (job, executor) = jobs.withLock { $0.removeFirst() }
            job.runSynchronously(on: executor)
        }
    }

    /// Runs `operation` and waits for its result, at most `timeout`; then the operation is
    /// cancelled and ``TokenCacheError/Code/databaseUnavailable`` thrown. The calling thread runs
    /// the operation's glue itself while it waits (a ``Waiter``): the answer wakes the caller, not
    /// this thread and then the caller.
    func wait<T: Sendable>(
        timeout: Duration, _ what: @autoclosure () -> String, _ operation: @escaping @Sendable () async throws -> T
    ) throws -> T {
        precondition(threadID.load(ordering: .acquiring) != UInt(pthread_self()), "the database thread waited for itself")
        let outcome = Outcome<T>()
        let waiter = Waiter(handingOverTo: self)
        let task = Task(executorPreference: waiter) { outcome.finish(await Self.result(of: operation)) }
        guard waiter.serve(until: .now(after: timeout), or: { outcome.isFinished }) else {
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
        private let value = Mutex<Result<T, any Error>?>(nil)

        func finish(_ result: Result<T, any Error>) {
            value.withLock { $0 = result }
        }

        var isFinished: Bool { value.withLock { $0 != nil } }

        func result() throws -> T { try value.withLock { $0! }.get() }
    }

    /// The executor of a task whose result a thread waits for: the waiting thread runs the task's
    /// jobs itself (``serve(until:or:)``), so that each answer from the database wakes one thread.
    /// Jobs that come after it stopped waiting (a task cancelled at a timeout, winding down) run on
    /// the database thread, so nothing the task holds (a pooled connection) is left behind.
    final class Waiter: TaskExecutor, @unchecked Sendable {
        // `@unchecked`: `state` is guarded by its mutex and `ready` is a semaphore.
        private let state = Mutex<(jobs: [UnownedJob], serving: Bool)>(([], true))
        private let ready = DispatchSemaphore(value: 0)
        private let thread: DatabaseThread
        /// Called by ``enqueue(_:)`` between queueing a job and signalling it: a test's way to
        /// widen that moment. `nil` outside tests.
        private let afterQueueing: (@Sendable () -> Void)?

        init(handingOverTo thread: DatabaseThread, afterQueueing: (@Sendable () -> Void)? = nil) {
            self.thread = thread
            self.afterQueueing = afterQueueing
        }

        func enqueue(_ job: consuming ExecutorJob) {
            // Held until the signal is given. Once the job is queued, the waiting thread may take
            // it without waiting for the signal (it drains the queue after each job), run it to the
            // end of its task and return from `wait`, and with the task gone nothing else holds
            // this waiter while the thread that enqueued (an event loop's) still has to signal.
            let retained = Unmanaged.passRetained(self)
            defer { retained.release() }
            let job = UnownedJob(job)
            let queued = state.withLock { state -> Bool in
                guard state.serving else { return false }
                state.jobs.append(job)
                return true
            }
            afterQueueing?()
            if queued { ready.signal() } else { thread.run(job, on: asUnownedTaskExecutor()) }
        }

        /// Runs the jobs enqueued here on the calling thread until `finished` says so (`true`) or
        /// `deadline` passes (`false`); from then on the database thread runs them.
        func serve(until deadline: DispatchTime, or finished: () -> Bool) -> Bool {
            let executor = asUnownedTaskExecutor()
            var done = false
            while !done {
                while let job = state.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) {
                    job.runSynchronously(on: executor)
                }
                if finished() { break }
                done = ready.wait(timeout: deadline) == .timedOut
            }
            let left = state.withLock { state -> [UnownedJob] in
                state.serving = false
                defer { state.jobs = [] }
                return state.jobs
            }
            for job in left { thread.run(job, on: executor) }
            return finished()
        }
    }
}
