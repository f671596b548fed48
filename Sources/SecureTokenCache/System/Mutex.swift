#if STC_THREAD_SANITIZER
    import Glibc

    /// The lock every type of the package uses in a ThreadSanitizer build (`scripts/sanitize thread`
    /// defines `STC_THREAD_SANITIZER`), in place of `Synchronization.Mutex`, which it shadows: the
    /// same initializer and `withLock`, over a `pthread_mutex_t`.
    ///
    /// `Synchronization.Mutex` takes a contended lock in the standard library's uninstrumented slow
    /// path (a spin, then a futex in the kernel), so ThreadSanitizer sees no acquire and reports the
    /// next access under the lock as a race with the previous holder's. It intercepts
    /// `pthread_mutex_lock`, so under this lock it sees the order the lock imposes, and a report is a
    /// real race. Every other build uses `Synchronization.Mutex` unchanged.
    struct Mutex<Value>: ~Copyable, @unchecked Sendable {
        private let mutex: UnsafeMutablePointer<pthread_mutex_t>
        private let value: UnsafeMutablePointer<Value>

        init(_ initialValue: consuming sending Value) {
            mutex = .allocate(capacity: 1)
            pthread_mutex_init(mutex, nil)
            value = .allocate(capacity: 1)
            value.initialize(to: initialValue)
        }

        deinit {
            value.deinitialize(count: 1)
            value.deallocate()
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
        }

        /// Runs `body` with the value, holding the lock.
        borrowing func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }

        /// Runs `body` with the value when the lock is free, else returns `nil` without waiting.
        borrowing func withLockIfAvailable<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result? {
            guard pthread_mutex_trylock(mutex) == 0 else { return nil }
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }
#endif
