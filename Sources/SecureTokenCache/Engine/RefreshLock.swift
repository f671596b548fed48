internal import CSodium
import Glibc
import Synchronization

/// One refresh at a time per group, account and client family: in this process (tasks wait
/// their turn on an in-memory queue) and across processes (an `flock` on a lock file).
///
/// The holder redeems the refresh token and stores the answer; a waiter, once it holds the
/// lock, re-reads the cache (the group snapshot catches up with the holder's commit) and finds
/// the new token, so a rotating refresh token is redeemed once and the authority sees one
/// request.
///
/// Lock files live in `$XDG_RUNTIME_DIR/secure-token-cache/<group>/` (else
/// `/tmp/secure-token-cache-<uid>/<group>/`), directories 0700 and files 0600, named by a
/// BLAKE2b hash of the key so no user or client id shows in a file name. They are never
/// unlinked: unlinking a lock file another process has open would let two holders in at once.
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

    /// Runs `body` holding the lock for `key` in group `group`. Waits at most `timeout` seconds
    /// for a holder in this process and as long again for one in another process; throws
    /// `.lockTimeout` after that.
    func withLock<Result: Sendable>(
        group: String,
        key: String,
        timeout: Double,
        _ body: () async throws -> Result
    ) async throws -> Result {
        let fullKey = group + "\n" + key
        try await acquireInProcess(fullKey, timeout: timeout)
        defer { releaseInProcess(fullKey) }
        let file = try await RefreshLockFile.acquire(group: group, key: fullKey, timeout: timeout)
        defer { file.release() }
        return try await body()
    }

    private func acquireInProcess(_ key: String, timeout: Double) async throws {
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
                try? await Task.sleep(nanoseconds: UInt64(timeout * 1e9))
                self.giveUp(key, waiter)
            }
        }
        guard acquired else {
            throw TokenCacheError(
                .lockTimeout, "another task has been refreshing this account's token for more than \(timeout) s; retry later")
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

/// An exclusive `flock` on one refresh lock file, held until ``release()``.
final class RefreshLockFile: Sendable {
    private let descriptor: Int32
    private let released = Atomic<Bool>(false)

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { release() }

    func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    private static let sodiumReady: Bool = sodium_init() >= 0

    /// Locks the file for `key`, polling so no thread blocks; throws `.lockTimeout` after
    /// `timeout` seconds.
    static func acquire(group: String, key: String, timeout: Double) async throws -> RefreshLockFile {
        let directory = try directory(group: group)
        let path = directory + "/refresh-" + (try hash(key)) + ".lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw TokenCacheError(
                .ioFailure, "cannot open the refresh lock file in \(directory)", underlying: .posix(call: "open", errno: errno))
        }
        let file = RefreshLockFile(descriptor: descriptor)
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_uid == getuid(), status.st_mode & 0o077 == 0 else {
            throw TokenCacheError(
                .insecurePermissions,
                "the refresh lock file in \(directory) is not private to this user (want 0600, owned by the user)")
        }
        let start = monotonicSeconds()
        var pause: UInt64 = 2_000_000
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let failure = errno
            guard failure == EWOULDBLOCK || failure == EINTR else {
                throw TokenCacheError(
                    .ioFailure, "cannot lock the refresh lock file", underlying: .posix(call: "flock", errno: failure))
            }
            guard monotonicSeconds() - start < timeout else {
                throw TokenCacheError(
                    .lockTimeout,
                    "another process has been refreshing this account's token for more than \(timeout) s; retry later")
            }
            do {
                try await Task.sleep(nanoseconds: pause)
            } catch {
                throw TokenCacheError(.lockTimeout, "cancelled while waiting for another process's token refresh")
            }
            pause = min(pause * 2, 20_000_000)
        }
        // The holder's pid, for diagnostics (`cat` the lock file to see who holds it).
        let pid = Array("\(getpid())\n".utf8)
        if ftruncate(descriptor, 0) == 0 { _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) } }
        return file
    }

    /// A hex BLAKE2b-128 of `key` (libsodium `crypto_generichash`).
    static func hash(_ key: String) throws -> String {
        guard sodiumReady else {
            throw TokenCacheError(
                .cryptoFailure, "libsodium failed to initialise", underlying: .sodium(function: "sodium_init", returnCode: -1))
        }
        var digest = [UInt8](repeating: 0, count: 16)
        let input = Array(key.utf8)
        let result = crypto_generichash(&digest, digest.count, input, UInt64(input.count), nil, 0)
        guard result == 0 else {
            throw TokenCacheError(
                .cryptoFailure, "hashing a lock name failed",
                underlying: .sodium(function: "crypto_generichash", returnCode: result))
        }
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in digest {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The private folder for `group`'s lock files, created 0700 as needed.
    static func directory(group: String) throws -> String {
        let root: String
        if let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), runtime.hasPrefix("/") {
            root = runtime + "/secure-token-cache"
        } else {
            // No per-user runtime directory (a container, a cron job): a per-user folder in
            // /tmp, checked to be ours and private, since anyone can create names there.
            root = "/tmp/secure-token-cache-\(getuid())"
        }
        try makePrivateDirectory(root)
        let safeName = (try? CacheGroup.validate(name: group)) != nil ? group : "group-" + (try hash(group))
        let path = root + "/" + safeName
        try makePrivateDirectory(path)
        return path
    }

    private static func makePrivateDirectory(_ path: String) throws {
        if mkdir(path, 0o700) != 0, errno != EEXIST {
            throw TokenCacheError(.ioFailure, "cannot create \(path)", underlying: .posix(call: "mkdir", errno: errno))
        }
        var status = stat()
        guard lstat(path, &status) == 0 else {
            throw TokenCacheError(.ioFailure, "cannot inspect \(path)", underlying: .posix(call: "lstat", errno: errno))
        }
        guard status.st_mode & S_IFMT == S_IFDIR, status.st_uid == getuid(), status.st_mode & 0o077 == 0 else {
            throw TokenCacheError(
                .insecurePermissions, "\(path) must be a directory owned by this user with mode 0700; fix it or remove it")
        }
    }

    private static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
