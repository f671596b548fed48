/// Locks that every process of a group takes the same way, wherever it runs: what a store shared
/// by processes on several machines offers where the other stores have lock files in the group's
/// folder (``RefreshLock``). One holder per key at a time, across every process of the group.
protocol GroupLocks: Sendable {
    /// Runs `body` holding the lock named `key` in the group, after waiting at most `timeout`
    /// for another process's holder.
    ///
    /// - Throws: ``TokenCacheError/Code/lockTimeout`` when another process held it past
    ///   `timeout`; the store's errors when the lock cannot be taken; what `body` throws.
    func withLock<Result: Sendable>(
        _ key: String, timeout: Duration, _ body: () async throws -> Result
    ) async throws -> Result
}

extension CacheStore {
    /// None: the store's processes meet in ``groupDirectory``, or it has only one process.
    var groupLocks: (any GroupLocks)? { nil }
}
