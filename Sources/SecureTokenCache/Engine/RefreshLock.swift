import Synchronization

/// One refresh at a time per group, account and client family: in this process (tasks wait
/// their turn on an in-memory queue) and across processes (an `flock` on a lock file).
///
/// The holder redeems the refresh token and stores the answer; a waiter, once it holds the
/// lock, re-reads the cache (the group snapshot catches up with the holder's commit) and finds
/// the new token, so a rotating refresh token is redeemed once and the authority sees one
/// request.
///
/// Lock files live in the group's own folder (``CacheStore/groupDirectory``), which every
/// process that opens the group finds whatever its environment, as `refresh-<hash>.lock`
/// (0600), named by a BLAKE2b hash of the key so no user or client id shows in a file name. They
/// are ``FileLock``s: never unlinked. A group whose processes run on several machines (a
/// database store) has no folder but ``GroupLocks`` of its own, which stand in for the files. A
/// group only this process sees (a memory store) has neither and needs only the in-process queue.
final class RefreshLock: Sendable {
    /// A task waiting for a key held by another task of this process.
    private struct Waiter {
        let id: UInt64
        /// Resumed with `true` when ownership passes to the waiter, `false` when it gave up.
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        /// Held keys and who waits for each, in arrival order.
        var queues: [String: [Waiter]] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())

    static let shared = RefreshLock()

    /// Runs `body` holding the lock for `key` in group `group`, whose lock files go in
    /// `directory`, or which `locks` hold across machines (neither: this process only). Waits at
    /// most `timeout` for a holder in this process and as long again for one in another process;
    /// throws `.lockTimeout` after that.
    func withLock<Result: Sendable>(
        group: String,
        directory: GroupDirectory?,
        locks: (any GroupLocks)? = nil,
        key: String,
        timeout: Duration,
        _ body: () async throws -> Result
    ) async throws -> Result {
        let fullKey = (directory?.path ?? group) + "\n" + key
        try await acquireInProcess(fullKey, timeout: timeout)
        defer { releaseInProcess(fullKey) }
        guard let directory else {
            guard let locks else { return try await body() }
            return try await locks.withLock(key, timeout: timeout, body)
        }
        // A group in another tool's cache makes its coordination folder on its first refresh.
        try directory.createIfNeeded()
        let file = FileLock(path: Self.lockFile(for: key, in: directory), purpose: "this account's token refresh")
        return try await file.withLock(timeout: timeout, backoff: .refresh, body)
    }

    /// The lock file of `key` in `directory`: `refresh-` and a hex BLAKE2b-128 of the key.
    static func lockFile(for key: String, in directory: GroupDirectory) -> String {
        let digest = Array(key.utf8).withUnsafeBytes { Sodium.checksum($0, outputCount: 16) }
        return directory.file("refresh-" + SecretFingerprint.hex(digest) + ".lock")
    }

    private func acquireInProcess(_ key: String, timeout: Duration) async throws {
        let acquired = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let waiter = state.withLock { state -> UInt64? in
                guard state.queues[key] != nil else {
                    state.queues[key] = []
                    return nil
                }
                state.nextWaiter += 1
                state.queues[key]!.append(Waiter(id: state.nextWaiter, continuation: continuation))
                return state.nextWaiter
            }
            guard let waiter else { return continuation.resume(returning: true) }
            // The holder is bounded by its own timeouts, but a custom TokenEndpointClient
            // might not be: never wait forever.
            Task {
                try? await Task.sleep(for: timeout)
                self.giveUp(key, waiter)
            }
        }
        guard acquired else {
            throw TokenCacheError(
                .lockTimeout,
                "another task has been refreshing this account's token for more than \(timeout.secondsText); retry later")
        }
    }

    /// Removes a waiter that waited too long, unless ownership already passed to it.
    private func giveUp(_ key: String, _ id: UInt64) {
        let waiter = state.withLock { state -> Waiter? in
            guard let position = state.queues[key]?.firstIndex(where: { $0.id == id }) else { return nil }
            return state.queues[key]!.remove(at: position)
        }
        waiter?.continuation.resume(returning: false)
    }

    private func releaseInProcess(_ key: String) {
        let next = state.withLock { state -> Waiter? in
            guard let waiting = state.queues[key] else { return nil }
            if waiting.isEmpty {
                state.queues[key] = nil
                return nil
            }
            // Ownership passes straight to the next waiter: the key stays held.
            return state.queues[key]!.removeFirst()
        }
        next?.continuation.resume(returning: true)
    }
}
