import Glibc
import Logging

extension CacheGroup {
    /// Opens the group `name` as `configuration` says.
    ///
    /// With `.auto` (the default) the group opens where it already lives; a new group goes to the
    /// Secret Service when one is reachable and unlocked, else to the encrypted file store. `auto`
    /// never falls back silently: a group that lives in the keyring fails with the keyring's
    /// error (for example `.collectionLocked`) rather than opening an empty file group.
    /// ``storeDescription`` says what was chosen and why.
    ///
    /// ```swift
    /// let group = try CacheGroup.open()  // auto: where the group lives, else the keyring, else a file
    /// print(group.storeDescription.reason)
    ///
    /// let configuration = CacheConfiguration(store: .file, keySource: .passphraseFromEnvironment(variable: "CACHE_PASSPHRASE"))
    /// let ci = try CacheGroup.open("com.contoso.ci", configuration: configuration)
    /// print(ci.storeDescription.protection)  // sealed with a passphrase-derived key (Argon2id)
    /// ```
    ///
    /// - Parameters:
    ///   - name: the group's name; by default ``CacheGroup/defaultName``, the group the Microsoft
    ///     SDKs share.
    ///   - configuration: the store, its folder, the key source, whether the keyring may prompt,
    ///     and the logger.
    ///
    /// Throws `TokenCacheError`: `.noSessionBus`, `.secretServiceUnavailable`,
    /// `.collectionLocked`, `.interactionNotAllowed`, `.keyringTimeout` for the keyring;
    /// `.wrongKey`, `.storeCorrupted`, `.insecurePermissions`, `.lockTimeout` for the file store;
    /// `.invalidArgument` for a bad name or configuration (a ``CacheConfiguration/memoryLimit``
    /// for another store than the memory store).
    public static func open(
        _ name: String = CacheGroup.defaultName,
        configuration: CacheConfiguration = CacheConfiguration()
    ) throws -> CacheGroup {
        try GroupName.validate(name)
        if let limit = configuration.memoryLimit {
            guard configuration.store == .memory else {
                throw TokenCacheError(
                    .invalidArgument,
                    "a memory limit bounds a group held in memory (store: .memory); a durable group is shared with other "
                        + "processes, whose tokens are not this process's to evict")
            }
            guard limit > 0 else {
                throw TokenCacheError(.invalidArgument, "the memory limit must be a positive number of bytes")
            }
        }
        let group =
            configuration.store == .auto
            ? try openAutomatically(name, configuration)
            : try StoreBackends.backend(configuration.store).openGroup(
                name, configuration, reason: "the \(configuration.store) store was requested")
        let store = group.storeDescription
        configuration.logger.info(
            "opened group \(name) in the \(store.kind.rawValue) store: \(store.reason)",
            metadata: ["protection": .string(store.protection.rawValue)])
        return group
    }

    /// Opens the group `name` only if it exists (in the store `configuration` names, or for
    /// `.auto` in the file or keyring store): commands that only read or remove never create a
    /// group, a key file or a keyring item.
    ///
    /// Such a group reads and authenticates its records when it opens, and files them into the
    /// index its lookups read only when something first reads or writes through it:
    /// ``statistics()`` counts the records without an index, which is most of the cost of
    /// opening a large group.
    ///
    /// - Throws: ``TokenCacheError/Code/notFound`` when the group does not exist, and the errors of
    ///   ``open(_:configuration:)``.
    public static func openExisting(_ name: String, configuration: CacheConfiguration = CacheConfiguration()) throws
        -> CacheGroup
    {
        try GroupName.validate(name)
        let candidates: [any StoreBackend.Type] =
            configuration.store == .auto ? [FileStore.self, KeyringStore.self] : [try StoreBackends.backend(configuration.store)]
        guard try candidates.contains(where: { try $0.holdsGroup(name, configuration) }) else {
            throw TokenCacheError(
                .notFound,
                "there is no group \(name) in the \(configuration.store == .auto ? "file or keyring" : configuration.store.rawValue) store under \(try fileRoot(configuration)); nothing was created"
            )
        }
        var existing = configuration
        existing.opensExistingOnly = true
        return try open(name, configuration: existing)
    }

    private static func openAutomatically(_ name: String, _ configuration: CacheConfiguration) throws -> CacheGroup {
        let root = try fileRoot(configuration)
        if try FileStore.holdsGroup(name, configuration) {
            return try openInFile(name, configuration, reason: "the group already lives in the file store at \(root)")
        }
        if try KeyringStore.holdsGroup(name, configuration) {
            // The group lives in the keyring: its errors (locked, no bus) are the answer, never a
            // new, empty file group.
            return try openInKeyring(name, configuration, reason: "the group lives in the Secret Service")
        }
        let keyring = keyringAvailability(configuration)
        if keyring == nil {
            return try openInKeyring(name, configuration, reason: "the Secret Service is reachable and unlocked")
        }
        let why = keyring.map { "the Secret Service is not usable (\($0.code))" } ?? ""
        if let keyring {
            configuration.logger.notice(
                "the Secret Service is not usable for group \(name) (\(keyring.code): \(keyring.message)); using the encrypted file store"
            )
        }
        return try openInFile(name, configuration, reason: "\(why); using the encrypted file store at \(root)")
    }

    /// The Secret Service options `configuration` asks for; every keyring client of an opened
    /// group uses them.
    static func keyringOptions(_ configuration: CacheConfiguration) -> KeyringOptions {
        KeyringOptions(
            callTimeout: configuration.keyringTimeout, probeTimeout: configuration.keyringTimeout,
            allowInteraction: configuration.allowsInteraction)
    }

    /// Checks that a Secret Service answers on the session bus and that its default collection is
    /// unlocked, without creating, unlocking or changing anything (no prompt is ever shown): what
    /// `auto` asks before it puts a new group in the keyring, and what `cachetool doctor` reports.
    ///
    /// - Throws: ``TokenCacheError`` with `.noSessionBus`, `.secretServiceUnavailable`,
    ///   `.collectionLocked`, `.keyringTimeout` or `.keyringFailure`, each saying what to do.
    public static func checkSecretService(configuration: CacheConfiguration = CacheConfiguration()) throws {
        if let error = keyringAvailability(configuration) { throw error }
    }

    /// `nil` when the Secret Service is reachable and its default collection unlocked, else why not.
    static func keyringAvailability(_ configuration: CacheConfiguration) -> TokenCacheError? {
        do {
            let options = keyringOptions(configuration)
            try KeyringClient.probe(busAddress: nil, timeout: options.probeTimeout)
            let client = KeyringClient(schema: .group, options: options)
            return try client.isDefaultCollectionLocked()
                ? TokenCacheError(.collectionLocked, "the keyring collection is locked") : nil
        } catch let error as TokenCacheError {
            return error
        } catch {
            return TokenCacheError(.keyringFailure, "the Secret Service could not be probed")
        }
    }

    /// The file-store root: the configured directory, else `$XDG_DATA_HOME/secure-token-cache`.
    static func fileRoot(_ configuration: CacheConfiguration) throws -> String {
        try configuration.directory ?? GroupDirectory.defaultRoot()
    }

    /// Whether anything is at `path` (a symbolic link counts; it is not followed). A path that
    /// cannot be inspected counts as missing.
    static func exists(_ path: String) -> Bool {
        ((try? SystemCall.lstat(path, "looking for \(path)")) ?? nil) != nil
    }
}
