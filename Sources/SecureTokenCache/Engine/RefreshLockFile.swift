internal import CSodium
import Glibc
import Synchronization

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
