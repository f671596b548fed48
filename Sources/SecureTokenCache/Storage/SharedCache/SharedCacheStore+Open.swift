import Logging

extension SharedCacheStore {
    /// Opens the shared cache `cache` in `medium` as group `name`, with its refresh locks in a
    /// coordination folder under the file-store root.
    static func openGroup(
        _ name: String, _ configuration: CacheConfiguration, cache: MSALSharedCache, medium: any SharedDocumentMedium,
        protection: ProtectionLevel, reason: String
    ) throws -> CacheGroup {
        let coordination = try GroupDirectory.shared(
            root: CacheGroup.fileRoot(configuration), name: name, lockFile: cache.lockFile)
        let store = try SharedCacheStore(
            name: name, kind: cache.kind, medium: medium, lockFile: cache.lockFile, coordination: coordination,
            protection: protection, lockTimeout: configuration.lockTimeout, logger: configuration.logger,
            creatingFolder: !configuration.opensExistingOnly)
        for warning in store.storeDescription.warnings {
            configuration.logger.notice("group \(name) is kept in another tool's cache: \(warning)")
        }
        return try CacheGroup(
            name: name, store: store, reason: "\(reason): the shared cache \(cache.name)", logger: configuration.logger)
    }
}
