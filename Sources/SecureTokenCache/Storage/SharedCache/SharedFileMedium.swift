import Glibc

/// A shared cache kept as a plaintext JSON file (Azure CLI, the extensions' file persistence).
///
/// Writes go to a new file beside it (`0600`, synced, its modification time set from the
/// precise clock) renamed over the path: a reader in any tool sees the old document or the new
/// one, never a part, and a process killed mid-write leaves the old one. MSAL.NET deletes a cache
/// it cannot parse, so a half-written document would lose every tool's sign-in. The precise
/// modification time matters to msal-extensions for Python, which reloads only when the file's
/// time is later than the wall-clock time of its own last write.
struct SharedFileMedium: SharedDocumentMedium {
    /// The document's path.
    let path: String

    var location: String { path }
    var watchedFile: String { path }
    var exposure: String {
        "plaintext JSON in \(path): the other tools' format, which cannot be sealed; any process of yours can read it, and so can anyone who gets the file or a backup of it"
    }

    func version() throws -> DocumentVersion? {
        try SystemCall.lstat(path, "looking at the shared cache \(path)").map(DocumentVersion.init)
    }

    func exists() throws -> Bool { try version() != nil }

    func read() throws -> (bytes: [UInt8], version: DocumentVersion?) {
        let what = "reading the shared cache \(path)"
        let fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { return ([], nil) }
            if code == ELOOP {
                throw TokenCacheError(
                    .insecurePermissions,
                    "the shared cache \(path) is a symbolic link; refusing to follow it: replace it with the file")
            }
            throw SystemCall.error("open", what, errno: code)
        }
        defer { close(fd) }
        let info = try SystemCall.fstat(fd, what)
        guard info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else {
            throw TokenCacheError(
                .insecurePermissions, "the shared cache \(path) is not a regular file owned by you; fix or remove it")
        }
        let bytes = try SystemCall.pread(fd, count: Int(info.st_size), at: 0, what)
        return (bytes, DocumentVersion(info))
    }

    func write(_ bytes: [UInt8]) throws -> DocumentVersion {
        let what = "writing the shared cache \(path)"
        let folder = SystemCall.parentDirectory(of: path)
        if try SystemCall.lstat(folder, what) == nil { try GroupDirectory.createFolders(folder) }
        let name = SystemCall.fileName(of: path)
        let temporary = folder + "/." + name + ".stc-" + String(getpid()) + "-" + SecretFingerprint.hex(try Sodium.randomBytes(4))
        let fd = try SystemCall.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600, what)
        var renamed = false
        defer {
            close(fd)
            if !renamed { unlink(temporary) }
        }
        try bytes.withUnsafeBytes { try SystemCall.pwrite(fd, $0, at: 0, what) }
        try SystemCall.fsync(fd, what)
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var times = [now, now]
        guard futimens(fd, &times) == 0 else { throw SystemCall.error("futimens", what) }
        guard rename(temporary, path) == 0 else { throw SystemCall.error("rename", what) }
        renamed = true
        try SystemCall.fsyncDirectory(folder)
        // After the rename, which moves the change time: the version a reader will find, so that
        // this process does not read its own write back. No other writer holds the lock now.
        return DocumentVersion(try SystemCall.fstat(fd, what))
    }

    /// A document other users can read or write (the tools create it `0600`; a copy or an
    /// archive may not be).
    func accessWarning() -> String? {
        guard let info = try? SystemCall.lstat(path, "looking at the shared cache \(path)"), info.st_mode & 0o077 != 0 else {
            return nil
        }
        let mode = String(info.st_mode & 0o777, radix: 8)
        return "\(path) can be read by other users (mode \(mode)): run chmod 600 \(path) (the next write makes it 0600)"
    }

    /// Removes what a writer killed between creating its new file and renaming it left beside
    /// the document. Only under the lock: no live writer has such a file then.
    func removeLeftovers() {
        let folder = SystemCall.parentDirectory(of: path)
        let name = SystemCall.fileName(of: path)
        let prefix = "." + name + ".stc-"
        for leftover in SystemCall.fileNames(in: folder, startingWith: prefix) {
            SystemCall.removeLeftover(folder + "/" + leftover)
        }
    }
}
