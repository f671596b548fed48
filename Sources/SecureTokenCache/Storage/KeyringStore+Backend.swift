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
        unlink(CacheGroup.keyringMarker(root: try CacheGroup.fileRoot(configuration), name: name))
    }
}
