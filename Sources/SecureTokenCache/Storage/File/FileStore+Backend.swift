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
        let aside = directory.root + "/." + name + ".moved-" + String(CacheGroup.systemTime())
        try SystemCall.rename(directory.path, aside, "the group was copied and emptied, but setting \(directory.path) aside")
    }
}

/// Opening a group in the file store, and where its default key file is.
extension CacheGroup {
    static func openInFile(_ name: String, _ configuration: CacheConfiguration, reason: String) throws -> CacheGroup {
        let root = try fileRoot(configuration)
        let (source, keyReason) = try fileKeySource(name, configuration)
        let keys = try source.makeProvider(group: name, configuration: configuration)
        let store = try FileStore(
            group: name, keyProvider: keys, root: root, lockTimeout: configuration.lockTimeout, logger: configuration.logger)
        return try CacheGroup(
            name: name, store: store, reason: reason + keyReason, logger: configuration.logger,
            filesOnFirstUse: configuration.opensExistingOnly)
    }

    /// Where the key of the file group `name` comes from: the configured source; else, for a
    /// group that exists, the kind of key its header records; else the Secret Service when it is
    /// usable, else the default key file (whose folder is made unless the configuration only opens
    /// existing groups). Returns the source and, for a chosen one, why.
    static func fileKeySource(
        _ name: String, _ configuration: CacheConfiguration
    ) throws -> (source: CacheConfiguration.KeySource, reason: String) {
        if let configured = configuration.keySource { return (configured, "") }
        // A group made where no Secret Service ran (over SSH, say) keeps its key file when one
        // runs later, and one whose key the Secret Service holds is not offered a key file while
        // it is away: the keyring's own error says what to start.
        switch try? GroupHeader.read(in: GroupDirectory(root: fileRoot(configuration), name: name)).keySource {
        case .keyring?: return (.keyring, "; its key is held by the Secret Service")
        case .keyFile?:
            let path = try defaultKeyFile(name, creatingFolder: false)
            return (.keyFile(path: path), "; its key is the key file \(path)")
        case .passphrase?:
            throw TokenCacheError(
                .wrongKey, "the group \(name) is sealed with a passphrase; configure its key source (a passphrase) to open it")
        case nil: break
        }
        if keyringAvailability(configuration) == nil { return (.keyring, "; its key is held by the Secret Service") }
        let path = try defaultKeyFile(name, creatingFolder: !configuration.opensExistingOnly)
        return (
            .keyFile(path: path),
            "; its key is the key file \(path) (no Secret Service; configure a passphrase for stronger protection)"
        )
    }

    /// `$XDG_CONFIG_HOME/secure-token-cache/keys/<group>.key` (or `~/.config/...`), its folders
    /// made `0700` when `creatingFolder` (not for a group opened only to be read: an existing
    /// group with such a key has them already).
    static func defaultKeyFile(_ name: String, creatingFolder: Bool = true) throws -> String {
        var base = getenv("XDG_CONFIG_HOME").map { String(cString: $0) } ?? ""
        if !base.hasPrefix("/") {
            let home = getenv("HOME").map { String(cString: $0) } ?? ""
            guard home.hasPrefix("/") else {
                throw TokenCacheError(
                    .invalidArgument, "no home directory for the key file; set XDG_CONFIG_HOME or configure a key source")
            }
            base = home + "/.config"
        }
        let folder = base + "/secure-token-cache/keys"
        if creatingFolder { try GroupDirectory(root: folder, name: name).createRoot() }
        return folder + "/" + name + ".key"
    }
}
