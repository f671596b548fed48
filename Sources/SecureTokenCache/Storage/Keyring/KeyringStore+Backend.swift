import Glibc

extension StoreKind {
    /// The freedesktop Secret Service (desktop keyring).
    public static let keyring = StoreKind(rawValue: "keyring")
}

extension KeyringStore: StoreBackend {
    static var kind: StoreKind { .keyring }
    static var isDurable: Bool { true }

    static func openGroup(_ name: String, _ configuration: CacheConfiguration, reason: String) throws -> CacheGroup {
        try CacheGroup.openInKeyring(name, configuration, reason: reason)
    }

    /// Whether the marker that says the group lives in the Secret Service exists (no D-Bus call:
    /// the marker is written when the group is first opened there).
    static func holdsGroup(_ name: String, _ configuration: CacheConfiguration) throws -> Bool {
        let marker = CacheGroup.keyringMarker(root: try CacheGroup.fileRoot(configuration), name: name)
        return try SystemCall.lstat(marker, "looking for the group \(name)") != nil
    }

    /// Removes the marker, so `auto` looks for the group elsewhere.
    static func retire(_ name: String, _ configuration: CacheConfiguration) throws {
        let marker = CacheGroup.keyringMarker(root: try CacheGroup.fileRoot(configuration), name: name)
        try SystemCall.unlink(marker, "the group was copied and emptied, but removing its keyring marker \(marker)")
    }
}

/// Opening a group in the Secret Service, and the marker that says it lives there.
extension CacheGroup {
    static func openInKeyring(_ name: String, _ configuration: CacheConfiguration, reason: String) throws -> CacheGroup {
        let root = try fileRoot(configuration)
        let store = try KeyringStore(
            group: name, options: keyringOptions(configuration), root: root, lockTimeout: configuration.lockTimeout,
            logger: configuration.logger)
        // Remember where the group lives, so `auto` never opens an empty file group in its place.
        try? GroupDirectory(root: root, name: name).createRoot()
        let marker = keyringMarker(root: root, name: name)
        // Best effort: a root this process cannot write to leaves no marker, and the group, which
        // lives in the keyring, opens all the same.
        if !exists(marker), let fd = try? SystemCall.open(marker, O_WRONLY | O_CREAT | O_NOFOLLOW, 0o600, "marking the group") {
            SystemCall.close(fd)
        }
        return try CacheGroup(
            name: name, store: store, reason: reason, logger: configuration.logger,
            filesOnFirstUse: configuration.opensExistingOnly)
    }

    /// The marker that says a group lives in the Secret Service (an empty 0600 file beside the
    /// file groups; it holds nothing secret).
    static func keyringMarker(root: String, name: String) -> String { root + "/." + name + ".in-keyring" }
}
