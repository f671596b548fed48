import Glibc

/// Keys read from a key file: exactly 32 random bytes, mode `0600`, owned by the user.
///
/// Making a group's key creates the file (`0600`, appearing complete or not at all; see
/// `SystemCall.createFileWhole`) if it does not exist
/// yet, and reuses it if it does, so one key file can protect several groups. A file that is group- or
/// world-accessible, not owned by the user, or not a regular file is refused with
/// ``TokenCacheError/Code/insecurePermissions``; the bytes go straight into guarded memory.
struct KeyFileKeyProvider: KeyProvider {
    /// The key file's path.
    let path: String

    /// A provider for the key file at `path`.
    init(path: String) throws {
        guard !path.isEmpty else { throw TokenCacheError(.invalidArgument, "the key file path is empty") }
        self.path = path
    }

    /// Always ``ProtectionLevel/keyFile``.
    var protectionLevel: ProtectionLevel { .keyFile }

    /// The key in the file, creating the file with a random key if it does not exist yet.
    func makeKey(groupID: [UInt8], groupName: String) throws -> ProvidedKey {
        if try SystemCall.lstat(path, "looking for the key file \(path)") != nil {
            return ProvidedKey(key: try readKey(), source: .keyFile)
        }
        // A process racing us never reads a half-written key: the file appears whole or not at
        // all, and if another process made it first, its key is the one.
        let key = try SecretKey()
        guard try key.withUnsafeBytes({ try SystemCall.createFileWhole(path, $0, "creating the key file \(path)") }) else {
            return ProvidedKey(key: try readKey(), source: .keyFile)
        }
        try SystemCall.fsyncDirectory(SystemCall.parentDirectory(of: path))
        return ProvidedKey(key: key, source: .keyFile)
    }

    /// The key in the file. Throws ``TokenCacheError/Code/wrongKey`` for a header that records
    /// another kind of key or a file that is not 32 bytes, and
    /// ``TokenCacheError/Code/insecurePermissions`` for a file others can read.
    func key(for source: HeaderKeySource, groupID: [UInt8], groupName: String) throws -> SecretKey {
        guard case .keyFile = source else { throw mismatch(source) }
        return try readKey()
    }

    private func readKey() throws -> SecretKey {
        let fd = try SystemCall.open(path, O_RDONLY | O_NOFOLLOW, 0, "opening the key file \(path)")
        defer { SystemCall.close(fd) }
        let info = try SystemCall.fstat(fd, "checking the key file \(path)")
        guard info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else {
            throw TokenCacheError(
                .insecurePermissions,
                "the key file \(path) must be a regular file owned by you with mode 0600 (chmod 600 it, or make a new one)"
            )
        }
        guard info.st_size == off_t(SecretKey.byteCount) else {
            throw TokenCacheError(
                .wrongKey, "the key file \(path) is not a key file (it must hold exactly \(SecretKey.byteCount) bytes)")
        }
        return try SecretKey { buffer in
            guard try SystemCall.pread(fd, into: buffer, at: 0, "reading the key file \(path)") == buffer.count else {
                throw TokenCacheError(.ioFailure, "the key file \(path) was cut short while it was read; retry")
            }
        }
    }
}
