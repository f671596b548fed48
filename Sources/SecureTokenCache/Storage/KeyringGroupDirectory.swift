import Glibc

/// The per-user runtime folder of one group, `$XDG_RUNTIME_DIR/secure-token-cache/<group>/`
/// (0700), which holds the group's lock file, shared generation counter, sealed change journal
/// (``KeyringJournal``) and copy of the newest transaction (``KeyringLastCommit``) for the
/// KeyringStore.
///
/// Internal and small on purpose: the FileStore keeps the same two files in its own folder, and
/// the two can be unified later.
struct KeyringGroupDirectory: Sendable {
    /// The folder's path.
    let path: String

    /// Checks that `name` can name a group: 1–200 characters from `A–Z a–z 0–9 . _ -`, not
    /// starting with a dot. It is used as a folder name and as a keyring attribute.
    static func validateGroupName(_ name: String) throws {
        let allowed = name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard allowed, !name.isEmpty, name.utf8.count <= 200, !name.hasPrefix(".") else {
            throw TokenCacheError(
                .invalidArgument,
                "a group name must be 1-200 characters of A-Z, a-z, 0-9, '.', '_' or '-', not starting with '.'"
            )
        }
    }

    /// Creates (or checks) the folder of `group` under `runtimeDirectory`, or under
    /// `$XDG_RUNTIME_DIR` when that is `nil`.
    ///
    /// - Throws: ``TokenCacheError/Code/invalidArgument`` for a bad group name or a missing
    ///   `XDG_RUNTIME_DIR`, ``TokenCacheError/Code/insecurePermissions`` if a folder on the way
    ///   is not a real directory owned by this user with mode 0700,
    ///   ``TokenCacheError/Code/ioFailure`` if it cannot be created.
    init(group: String, runtimeDirectory: String? = nil) throws {
        try Self.validateGroupName(group)
        let base = runtimeDirectory ?? getenv("XDG_RUNTIME_DIR").map { String(cString: $0) }
        guard let base, base.hasPrefix("/") else {
            throw TokenCacheError(
                .invalidArgument,
                "XDG_RUNTIME_DIR is not set (or not absolute): the keyring store keeps its lock, generation counter and journal there"
            )
        }
        let root = base + "/secure-token-cache"
        try Self.makePrivateDirectory(root)
        path = root + "/" + group
        try Self.makePrivateDirectory(path)
    }

    /// The path of a file in the folder.
    func file(_ name: String) -> String { path + "/" + name }

    private static func makePrivateDirectory(_ path: String) throws {
        if mkdir(path, 0o700) != 0, errno != EEXIST {
            throw TokenCacheError(
                .ioFailure, "cannot create \(path)", underlying: .posix(call: "mkdir", errno: errno)
            )
        }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            throw TokenCacheError(.ioFailure, "cannot inspect \(path)", underlying: .posix(call: "lstat", errno: errno))
        }
        guard info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid(), info.st_mode & 0o077 == 0 else {
            throw TokenCacheError(
                .insecurePermissions,
                "\(path) must be a directory owned by this user with mode 0700; fix or remove it"
            )
        }
    }
}
