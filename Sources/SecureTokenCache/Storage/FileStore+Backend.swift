import Glibc

extension StoreKind {
    /// The encrypted file store.
    public static let file = StoreKind(rawValue: "file")
}

extension FileStore: StoreBackend {
    static var kind: StoreKind { .file }
    static var isDurable: Bool { true }

    static func openGroup(_ name: String, _ configuration: CacheConfiguration, reason: String) throws -> CacheGroup {
        try CacheGroup.openInFile(name, configuration, reason: reason)
    }

    /// Whether the group's folder exists under the configured root.
    static func holdsGroup(_ name: String, _ configuration: CacheConfiguration) throws -> Bool {
        let directory = try GroupDirectory(root: CacheGroup.fileRoot(configuration), name: name)
        return try SystemCall.lstat(directory.path, "looking for the group \(name)") != nil
    }

    /// Sets the emptied folder aside as `.<name>.moved-<time>` (sealed, holding no records).
    static func retire(_ name: String, _ configuration: CacheConfiguration) throws {
        let directory = try GroupDirectory(root: CacheGroup.fileRoot(configuration), name: name)
        let aside = directory.root + "/." + name + ".moved-" + String(CacheGroup.systemClock())
        guard rename(directory.path, aside) == 0 else {
            throw TokenCacheError(
                .ioFailure, "the group was copied and emptied, but \(directory.path) could not be set aside",
                underlying: .posix(call: "rename", errno: errno))
        }
    }
}
