/// The backend of ``StoreKind/msalFile``: a shared cache kept as a plaintext JSON file.
enum SharedFileBackend: StoreBackend {
    static var kind: StoreKind { .msalFile }
    static var isDurable: Bool { true }

    static func openGroup(_ name: String, _ configuration: CacheConfiguration, reason: String) throws -> CacheGroup {
        let (cache, path) = try location(configuration)
        return try SharedCacheStore.openGroup(
            name, configuration, cache: cache, medium: SharedFileMedium(path: path), protection: .plaintextFile, reason: reason)
    }

    /// Whether the file exists.
    static func holdsGroup(_ name: String, _ configuration: CacheConfiguration) throws -> Bool {
        try SharedFileMedium(path: location(configuration).path).exists()
    }

    /// Nothing: the emptied document stays, so the other tools see a cache with no sign-in
    /// rather than a missing one.
    static func retire(_ name: String, _ configuration: CacheConfiguration) throws {}

    private static func location(_ configuration: CacheConfiguration) throws -> (MSALSharedCache, path: String) {
        guard let cache = configuration.sharedCache, case .file(let path) = cache.location else {
            throw TokenCacheError(
                .invalidArgument, "the msal-file store needs a shared cache file: set CacheConfiguration.sharedCache")
        }
        try cache.requireAbsolutePaths()
        return (cache, path)
    }
}
