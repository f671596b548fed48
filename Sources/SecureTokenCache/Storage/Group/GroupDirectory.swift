import Glibc

/// The folder of one group: where every process that opens the group finds the group's files,
/// whatever its environment says, because the path is made from the group's name and the root
/// it lives under, nothing else.
///
/// - A file-store group's folder is `<root>/<group>/`, mode `0700`, holding `header`, `log`,
///   `state`, `lock`, the refresh locks and, after damage was found, `quarantine/`.
/// - A keyring group's folder is `<root>/.<group>.keyring/`, mode `0700`, holding what processes
///   must agree on besides the Secret Service item: the group lock, the refresh locks, the shared
///   generation counter and the change journal. It sits under the same root as file groups (and
///   as the marker that says the group lives in the keyring) rather than in `$XDG_RUNTIME_DIR`,
///   which differs between a desktop session, a cron job, `sudo -u` and an SSH login of one user:
///   processes that disagree on the folder would take different locks, and each redeem the same
///   refresh token.
///
/// A relative root is made absolute when the directory is made, so a later `chdir` cannot move it.
struct GroupDirectory: Sendable, Hashable {
    /// The directory holding every group.
    let root: String
    /// The group's name (a single path component).
    let name: String
    /// The group folder's path.
    let path: String

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

    /// The folder of the file-store group `name` under `root`.
    ///
    /// - Throws: ``TokenCacheError/Code/invalidArgument`` for a bad name or an empty root.
    init(root: String, name: String) throws {
        try self.init(root: root, name: name, folder: name)
    }

    /// The coordination folder of the keyring group `name`, under the file-store root `root`.
    ///
    /// - Throws: ``TokenCacheError/Code/invalidArgument`` for a bad name or an empty root.
    static func keyring(root: String, name: String) throws -> GroupDirectory {
        try GroupDirectory(root: root, name: name, folder: "." + name + ".keyring")
    }

    private init(root: String, name: String, folder: String) throws {
        try GroupName.validate(name)
        guard !root.isEmpty else { throw TokenCacheError(.invalidArgument, "the root directory path is empty") }
        var absolute = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
        if !absolute.hasPrefix("/") {
            let cwd = try SystemCall.currentDirectory("making the cache directory \(root) absolute")
            absolute = (cwd == "/" ? "" : cwd) + "/" + (absolute == "." ? "" : absolute)
            if absolute.count > 1 && absolute.hasSuffix("/") { absolute.removeLast() }
        }
        self.root = absolute
        self.name = name
        path = absolute + "/" + folder
    }

    /// The coordination folder of a group kept in another tool's shared cache (its refresh
    /// locks), under the file-store root `root`: named after the cache's lock file, which every
    /// tool and every process of ours agrees on.
    static func shared(root: String, name: String, lockFile: String) throws -> GroupDirectory {
        let digest = Array(lockFile.utf8).withUnsafeBytes { Sodium.checksum($0, outputCount: 8) }
        return try GroupDirectory(root: root, name: name, folder: ".shared-" + SecretFingerprint.hex(digest))
    }

    /// Creates the root (and missing parents, `0700`) and the group folder (`0700`) if needed,
    /// then checks the folder as ``checkSecure()`` does.
    func createIfNeeded() throws {
        try createRoot()
        try SystemCall.mkdir(path, "creating \(path)")
        try checkSecure()
    }

    /// The size of ``identity()``.
    static let identityByteCount = 16

    /// The folder's identity: random bytes in its file `id` (0600), made by the first process
    /// that asks. Two processes that use one folder, by whatever path, read the same id; a process
    /// that finds another id recorded for the group knows that it coordinates elsewhere.
    func identity() throws -> [UInt8] {
        let what = "reading the group folder's id"
        if try SystemCall.lstat(file("id"), what) == nil {
            try SystemCall.createFileWhole(file("id"), try Sodium.randomBytes(Self.identityByteCount), what)
        }
        let fd = try openFile("id", O_RDONLY, what)
        defer { SystemCall.close(fd) }
        let bytes = try SystemCall.readAll(fd, what)
        guard bytes.count == Self.identityByteCount else {
            throw TokenCacheError(.storeCorrupted, "\(file("id")) is damaged; remove it (a new one is made)")
        }
        return bytes
    }

    /// Creates the root directory (and missing parents) with mode `0700`.
    func createRoot() throws {
        try Self.createFolders(root)
    }

    /// Creates the folder `path` and its missing parents with mode `0700`.
    static func createFolders(_ path: String) throws {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            try SystemCall.mkdir(current, "creating the cache directory \(current)")
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
        try SystemCall.openPrivateFile(self.file(file), flags, withoutAccessTime: true, what)
    }
}
