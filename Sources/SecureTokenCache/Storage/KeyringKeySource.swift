/// The Secret Service as the key holder of a file-stored group: the group's 32-byte key is the
/// keyring item ``KeyringKeyProvider`` keeps for the group's name (so a group moved between the
/// file store and the keyring store keeps its key).
struct KeyringKeySource: KeyProvider {
    private let provider: KeyringKeyProvider

    var protectionLevel: ProtectionLevel { KeyringKeyProvider.protectionLevel }

    /// A key source for `group`, whose keyring folder is under the file-store root `root`. Throws the keyring's typed availability errors.
    init(group: String, options: KeyringOptions, root: String, lockTimeout: Duration) throws {
        let client = KeyringClient(schema: .group, options: options)
        try client.requireUnlocked()
        // The key item is the keyring group's too: create it under that group's lock.
        let directory = try GroupDirectory.keyring(root: root, name: group)
        try directory.createIfNeeded()
        provider = KeyringKeyProvider(
            group: group, client: client, lock: FileLock(path: directory.file("lock"), purpose: "the group \(group)"),
            lockTimeout: lockTimeout)
    }

    func makeKey(groupID: [UInt8], groupName: String) throws -> ProvidedKey {
        ProvidedKey(key: try provider.groupKey(), source: .keyring)
    }

    func key(for source: KeySource, groupID: [UInt8], groupName: String) throws -> SecretKey {
        guard case .keyring = source else { throw mismatch(source) }
        return try provider.groupKey()
    }
}
