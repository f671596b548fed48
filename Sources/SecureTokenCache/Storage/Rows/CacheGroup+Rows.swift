import Logging

extension StoreKind {
    /// A PostgreSQL database that a fleet of server instances shares; opened with
    /// `CacheGroup.open(_:postgres:configuration:)` from the `SecureTokenCachePostgres` library,
    /// not by naming this kind in a configuration.
    public static let postgres = StoreKind(rawValue: "postgres")
}

extension CacheGroup {
    /// Opens group `name` kept in `database`, one sealed row per record (``RowStore``): the
    /// entry point of the database modules, which make the ``RowDatabase``.
    ///
    /// With a ``CacheConfiguration/memoryLimit``, the process keeps in memory only the partitions
    /// its lookups ask for, loaded on a miss, and drops the least recently used ones from memory
    /// (never from the database) to stay under the limit.
    ///
    /// - Parameter idlePartitionAge: a partition nobody wrote for this long is deleted by the
    ///   sweeps; `nil` for never.
    /// - Throws: ``TokenCacheError/Code/invalidArgument`` for a bad name or a configuration
    ///   without a key source (every instance must open the group with the same key, so none
    ///   may be made up for one), and ``RowStore``'s and the database's errors.
    package static func open(
        _ name: String, database: any RowDatabase, configuration: CacheConfiguration, idlePartitionAge: Duration? = nil
    ) throws -> CacheGroup {
        try GroupName.validate(name)
        guard let source = configuration.keySource else {
            throw TokenCacheError(
                .invalidArgument,
                "a group in \(database.location) is shared by every instance that opens it: configure the same key "
                    + "source on each (CacheConfiguration.keySource: a key file or a passphrase)")
        }
        let reason = "the PostgreSQL database \(database.location) was requested; its key is the \(source)"
        let options = RowStoreOptions(
            keepsPart: configuration.memoryLimit != nil, idlePartitionAge: idlePartitionAge, classify: Self.rowTraits)
        let store = try RowStore(
            name: name, database: database, keyProvider: source.makeProvider(group: name, configuration: configuration),
            protectionReason: reason, creating: !configuration.opensExistingOnly, options: options,
            logger: configuration.logger)
        let group = try CacheGroup(
            name: name, store: store, reason: reason, logger: configuration.logger, memoryLimit: configuration.memoryLimit,
            whenDatabaseUnavailable: configuration.whenDatabaseUnavailable)
        configuration.logger.info(
            "opened group \(name) in the postgres store: \(reason)",
            metadata: ["protection": .string(store.storeDescription.protection.rawValue)])
        return group
    }

    /// What a database row may tell of its record: the partition of an entry or of an account's
    /// sign-in state (its user's: loaded and dropped with the user's tokens), and the expiry of an
    /// access token.
    static let rowTraits: @Sendable (Record) -> (partition: String?, expiresAt: Int64?) = { record in
        if let partition = RecordCodec.signInPartition(of: record.id) { return (partition, nil) }
        guard RecordCodec.credentialKind(record.id.kind) != nil,
            case .insert(let stored)? = try? RecordCodec.decode(record)
        else { return (nil, nil) }
        let expiry: Int64? = if case .accessToken(let token) = stored.entry { token.expiresOn } else { nil }
        return (CachePartition(of: stored.entry)?.storageKey, expiry)
    }
}
