import Glibc

/// A file-stored group's directory, `<root>/<group name>/`, mode `0700`, holding `header`, `log`,
/// `state`, `lock` and, after damage was found, `quarantine/`.
struct GroupDirectory: Sendable {
    /// The directory holding every group.
    let root: String
    /// The group's name (a single path component).
    let name: String

    /// The group directory's path.
    var path: String { root + "/" + name }

    /// The path of `file` inside the group.
    func file(_ file: String) -> String { path + "/" + file }

    /// `$XDG_DATA_HOME/secure-token-cache`, or `~/.local/share/secure-token-cache` when
    /// `XDG_DATA_HOME` is unset or not absolute (as the XDG base directory spec says).
    static func defaultRoot() throws -> String {
        var home = getenv("HOME").map { String(cString: $0) } ?? ""
        if home.isEmpty, let entry = getpwuid(geteuid()), let dir = entry.pointee.pw_dir {
            home = String(cString: dir)
        }
        return try defaultRoot(xdgDataHome: getenv("XDG_DATA_HOME").map { String(cString: $0) }, home: home)
    }

    /// ``defaultRoot()`` for the given `XDG_DATA_HOME` and home directory (no environment access,
    /// so tests need not change the process environment, which is not thread-safe).
    static func defaultRoot(xdgDataHome: String?, home: String) throws -> String {
        if let xdgDataHome, xdgDataHome.hasPrefix("/") { return xdgDataHome + "/secure-token-cache" }
        guard home.hasPrefix("/") else {
            throw TokenCacheError(
                .invalidArgument, "no home directory to put the cache in; set XDG_DATA_HOME or pass a root directory")
        }
        return home + "/.local/share/secure-token-cache"
    }

    /// A group directory, after checking that `name` is one safe path component.
    init(root: String, name: String) throws {
        guard !name.isEmpty, name.utf8.count <= 200, !name.hasPrefix("."), !name.contains("/"),
            name.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
        else {
            throw TokenCacheError(
                .invalidArgument, "a group name must be 1-200 printable characters without '/' and not start with '.'")
        }
        guard !root.isEmpty else { throw TokenCacheError(.invalidArgument, "the root directory path is empty") }
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
        self.name = name
    }

    /// Creates the root directory (and missing parents) with mode `0700`.
    func createRoot() throws {
        var current = root.hasPrefix("/") ? "" : "."
        for component in root.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o700) != 0, errno != EEXIST {
                throw SystemCall.error("mkdir", "creating the cache directory \(current)")
            }
        }
    }

    /// Throws ``TokenCacheError/Code/insecurePermissions`` unless the group directory is a real
    /// directory (not a symlink) owned by the user and not writable by group or others, and
    /// ``TokenCacheError/Code/ioFailure`` if its owner cannot use it.
    func checkSecure() throws {
        guard let info = try SystemCall.lstat(path, "checking the group directory \(path)") else {
            throw TokenCacheError(.notFound, "the group directory \(path) does not exist")
        }
        let type = info.st_mode & S_IFMT
        guard type != S_IFLNK else {
            throw TokenCacheError(.insecurePermissions, "the group directory \(path) is a symbolic link; refusing to follow it")
        }
        guard type == S_IFDIR else { throw TokenCacheError(.insecurePermissions, "\(path) is not a directory") }
        guard info.st_uid == geteuid() else {
            throw TokenCacheError(.insecurePermissions, "the group directory \(path) is owned by uid \(info.st_uid), not by you")
        }
        guard info.st_mode & 0o022 == 0 else {
            throw TokenCacheError(
                .insecurePermissions,
                "the group directory \(path) is writable by other users (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 700 it"
            )
        }
        guard info.st_mode & 0o700 == 0o700 else {
            throw TokenCacheError(
                .ioFailure,
                "the group directory \(path) is not readable, writable and searchable by you (mode \(String(info.st_mode & 0o777, radix: 8)))",
                underlying: .posix(call: "access", errno: EACCES)
            )
        }
    }

    /// Opens a file of the group (never following a symlink) and checks it is a regular file
    /// owned by the user with no group or other access.
    func openFile(_ file: String, _ flags: Int32, _ what: String) throws -> Int32 {
        let fd = try SystemCall.openWithoutAccessTime(self.file(file), flags | O_NOFOLLOW, 0o600, what)
        do {
            let info = try SystemCall.fstat(fd, what)
            guard info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else {
                throw TokenCacheError(
                    .insecurePermissions, "\(self.file(file)) must be a regular file owned by you with mode 0600")
            }
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// Creates the group atomically: builds it in a hidden sibling directory and renames that into
    /// place, so no process ever sees a half-made group. Returns the new group's sealer, or `nil`
    /// if another process created the group first (then open that one).
    func create(keyProvider: any KeyProvider) throws -> RecordSealer? {
        try createRoot()
        let suffix = try Sodium.randomBytes(6).map { String($0, radix: 16) }.joined()
        let temporary = root + "/.\(name).new-\(getpid())-\(suffix)"
        guard mkdir(temporary, 0o700) == 0 else { throw SystemCall.error("mkdir", "creating the group directory") }
        var renamed = false
        defer {
            if !renamed {
                for file in ["header", "log", "state", "lock"] { unlink(temporary + "/" + file) }
                rmdir(temporary)
            }
        }
        let groupID = try Sodium.randomBytes(16)
        let provided = try keyProvider.makeKey(groupID: groupID, groupName: name)
        let source = provided.source
        let sealer = try RecordSealer(groupKey: provided.key, groupName: name)
        let header = try GroupHeader(groupID: groupID, keySource: source, sealer: sealer)
        try SystemCall.writeNewFile(temporary + "/header", header.encoded(), "writing the group header")
        try SystemCall.writeNewFile(temporary + "/log", LogFormat.header(epoch: 1, groupID: groupID), "writing the group log")
        try SystemCall.writeNewFile(
            temporary + "/state",
            SharedState.initialBytes(CommitWord(epoch: 1, length: UInt64(LogFormat.headerByteCount))),
            "writing the group state"
        )
        try SystemCall.writeNewFile(temporary + "/lock", [], "creating the group lock")
        try SystemCall.fsyncDirectory(temporary)
        guard Glibc.rename(temporary, path) == 0 else {
            if errno == EEXIST || errno == ENOTEMPTY { return nil }
            throw SystemCall.error("rename", "creating the group directory \(path)")
        }
        renamed = true
        try SystemCall.fsyncDirectory(root)
        return sealer
    }

    /// Copies the group's `file` into `quarantine/` (created `0700`) and returns the copy's
    /// path, or `nil` if no copy could be made. The damaged file itself is left in place.
    func quarantine(_ file: String) -> String? {
        let folder = path + "/quarantine"
        if mkdir(folder, 0o700) != 0, errno != EEXIST { return nil }
        guard let source = try? SystemCall.open(self.file(file), O_RDONLY | O_NOFOLLOW, 0, "reading a damaged file") else {
            return nil
        }
        defer { close(source) }
        guard let bytes = try? SystemCall.readAll(source, "reading a damaged file") else { return nil }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        for attempt in 0..<100 {
            let copy = folder + "/\(file).\(now.tv_sec).\(now.tv_nsec).\(getpid()).\(attempt)"
            do {
                try SystemCall.writeNewFile(copy, bytes, "quarantining a damaged file")
                try? SystemCall.fsyncDirectory(folder)
                return copy
            } catch let error as TokenCacheError where error.underlying == .posix(call: "open", errno: EEXIST) {
                continue
            } catch {
                return nil
            }
        }
        return nil
    }
}
