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
    /// - Throws: ``TokenCacheError/Code/invalidArgument`` for a bad name or a configuration
    ///   without a key source (every instance must open the group with the same key, so none
    ///   may be made up for one), and ``RowStore``'s and the database's errors.
    package static func open(
        _ name: String, database: any RowDatabase, configuration: CacheConfiguration
    ) throws -> CacheGroup {
        try GroupName.validate(name)
        guard let source = configuration.keySource else {
            throw TokenCacheError(
                .invalidArgument,
                "a group in \(database.location) is shared by every instance that opens it: configure the same key "
                    + "source on each (CacheConfiguration.keySource: a key file or a passphrase)")
        }
        guard configuration.memoryLimit == nil else {
            throw TokenCacheError(
                .invalidArgument,
                "a memory limit bounds a group held in memory (store: .memory); a database group is shared with other "
                    + "instances, whose tokens are not this process's to evict")
        }
        let reason = "the PostgreSQL database \(database.location) was requested; its key is the \(source)"
        let store = try RowStore(
            name: name, database: database, keyProvider: source.makeProvider(group: name, configuration: configuration),
            protectionReason: reason, creating: !configuration.opensExistingOnly)
        let group = try CacheGroup(name: name, store: store, reason: reason, logger: configuration.logger)
        configuration.logger.info(
            "opened group \(name) in the postgres store: \(reason)",
            metadata: ["protection": .string(store.storeDescription.protection.rawValue)])
        return group
    }
}
