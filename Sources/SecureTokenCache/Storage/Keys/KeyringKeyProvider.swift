import Synchronization

/// Keys held by the Secret Service: a group's 32-byte sealing key kept as one binary item (role
/// `key`), created with random bytes on first use and fetched from the keyring once per process.
///
/// The one owner of the key item, for both stores: the ``KeyringStore`` seals its records with
/// it, and a file group configured with ``CacheConfiguration/KeySource/keyring`` uses it as its
/// provider, so a group moved between the two stores keeps its key.
///
/// The key item's attributes are the schema, the group and the role, nothing else. A key is
/// created only under the keyring group's lock and only when the group has no records item, so
/// two processes racing on first use agree on one key, and a lost key item is an error rather
/// than a fresh key that would orphan the group's records.
final class KeyringKeyProvider: KeyProvider {
    /// The group whose key this is.
    let group: String
    private let client: KeyringClient
    /// The keyring group's lock, under which a missing key is created; `nil` for a provider that
    /// only reads (``existingKey(group:options:)``).
    private let lock: FileLock?
    private let lockTimeout: Duration

    /// Keys fetched by this process, by group; each holds its bytes in guarded memory.
    private static let cache = Mutex<[String: CachedKey]>([:])

    private final class CachedKey: Sendable {
        let key: SecretKey
        init(_ key: consuming SecretKey) { self.key = key }
    }

    /// A provider for `group`'s key through `client`, creating it under `lock` (the keyring
    /// group's lock, waited for at most `lockTimeout`) if needed. For a caller that already holds
    /// the keyring group's client and lock, as the ``KeyringStore`` does.
    init(group: String, client: KeyringClient, lock: FileLock?, lockTimeout: Duration) {
        self.group = group
        self.client = client
        self.lock = lock
        self.lockTimeout = lockTimeout
    }

    /// A provider for `group`'s key, with the keyring group's lock in its coordination folder
    /// under the file-store root `root` (created if missing, as the ``KeyringStore`` makes it).
    ///
    /// - Throws: the Secret Service's typed availability errors
    ///   (``TokenCacheError/Code/noSessionBus``, ``TokenCacheError/Code/collectionLocked``, …),
    ///   checked now so a file group never gets as far as creating itself without its key.
    convenience init(group: String, options: KeyringOptions, root: String, lockTimeout: Duration) throws {
        let client = KeyringClient(schema: .group, options: options)
        try client.requireUnlocked()
        let directory = try GroupDirectory.keyring(root: root, name: group)
        try directory.createIfNeeded()
        self.init(
            group: group, client: client, lock: FileLock(path: directory.file("lock"), purpose: "the group \(group)"),
            lockTimeout: lockTimeout)
    }

    /// A provider that only reads the group's key item: it creates no folder, takes no lock (which
    /// would record this process's pid) and never makes a key; a group without a key item fails
    /// with ``TokenCacheError/Code/wrongKey``. For checks that must leave everything as it is.
    ///
    /// - Throws: the Secret Service's typed availability errors, checked now.
    static func existingKey(group: String, options: KeyringOptions) throws -> KeyringKeyProvider {
        let client = KeyringClient(schema: .group, options: options)
        try client.requireUnlocked()
        return KeyringKeyProvider(group: group, client: client, lock: nil, lockTimeout: .zero)
    }

    /// Always ``ProtectionLevel/keyring``.
    var protectionLevel: ProtectionLevel { .keyring }

    /// The group's key item, fetched or created (see ``groupKey()``); the header records only
    /// that the keyring holds it.
    func makeKey(groupID: [UInt8], groupName: String) throws -> ProvidedKey {
        ProvidedKey(key: try groupKey(), source: .keyring)
    }

    /// The group's key item (see ``groupKey()``). Throws ``TokenCacheError/Code/wrongKey`` for a
    /// header that records another kind of key.
    func key(for source: HeaderKeySource, groupID: [UInt8], groupName: String) throws -> SecretKey {
        guard case .keyring = source else { throw mismatch(source) }
        return try groupKey()
    }

    /// The attributes of the group's key item.
    var keyAttributes: [String: String] { ["group": group, "role": "key"] }

    /// The group's key: from this process's cache, else from the keyring, else newly created.
    ///
    /// - Throws: the Secret Service's typed availability errors (``TokenCacheError/Code/noSessionBus``,
    ///   ``TokenCacheError/Code/collectionLocked``, …); ``TokenCacheError/Code/storeCorrupted`` if
    ///   the key item is malformed, or missing while the group's records item exists.
    func groupKey() throws -> SecretKey {
        if let cached = Self.cache.withLock({ $0[group] }) {
            return try cached.key.withUnsafeBytes { try SecretKey(copying: $0) }
        }
        guard let lock else {
            guard let existing = try fetch() else {
                throw TokenCacheError(
                    .wrongKey, "the keyring holds no key item of group \(group), so its key cannot open the group")
            }
            return existing
        }
        let fetched = try lock.withLock(timeout: lockTimeout) { try fetchOrCreate() }
        let copy = try fetched.key.withUnsafeBytes { try SecretKey(copying: $0) }
        Self.cache.withLock { cache in
            if cache[group] == nil { cache[group] = fetched }
        }
        return copy
    }

    /// Forgets every cached key of this process (tests that replace the keyring).
    static func forgetCachedKeys() {
        cache.withLock { $0.removeAll() }
    }

    private func fetchOrCreate() throws -> CachedKey {
        if let existing = try fetch() { return CachedKey(existing) }
        guard try client.count(matching: ["group": group, "role": "records"]) == 0 else {
            throw TokenCacheError(
                .storeCorrupted,
                "the keyring holds records of group \(group) but not its key item; the records cannot be opened"
            )
        }
        let key = try SecretKey()
        try key.withUnsafeBytes { bytes in
            try client.store(bytes, label: "SecureTokenCache key (\(group))", attributes: keyAttributes)
        }
        // Read it back: the key used from now on is the one the keyring holds.
        guard let stored = try fetch() else {
            throw TokenCacheError(.keyringFailure, "the Secret Service did not keep the new key item of group \(group)")
        }
        return CachedKey(stored)
    }

    private func fetch() throws -> SecretKey? {
        try client.withSecret(attributes: keyAttributes) { bytes in
            guard bytes.count == SecretKey.byteCount else {
                throw TokenCacheError(
                    .storeCorrupted,
                    "the keyring key item of group \(group) holds \(bytes.count) bytes, not \(SecretKey.byteCount)"
                )
            }
            return try SecretKey(copying: bytes)
        }
    }
}
