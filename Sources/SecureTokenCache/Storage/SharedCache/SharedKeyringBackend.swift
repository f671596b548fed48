/// The backend of ``StoreKind/msalKeyring``: a shared cache kept as one Secret Service item.
enum SharedKeyringBackend: StoreBackend {
    static var kind: StoreKind { .msalKeyring }
    static var isDurable: Bool { true }

    static func openGroup(_ name: String, _ configuration: CacheConfiguration, reason: String) throws -> CacheGroup {
        let (cache, medium) = try location(configuration)
        return try SharedCacheStore.openGroup(
            name, configuration, cache: cache, medium: medium, protection: .keyringItem, reason: reason)
    }

    /// Whether the item exists, found by a search that neither unlocks nor prompts.
    static func holdsGroup(_ name: String, _ configuration: CacheConfiguration) throws -> Bool {
        try location(configuration).medium.exists()
    }

    /// Nothing: the emptied document stays, so the other tools see a cache with no sign-in
    /// rather than a missing one.
    static func retire(_ name: String, _ configuration: CacheConfiguration) throws {}

    private static func location(_ configuration: CacheConfiguration) throws -> (MSALSharedCache, medium: SharedKeyringMedium) {
        guard let cache = configuration.sharedCache, case .keyring(let item) = cache.location else {
            throw TokenCacheError(
                .invalidArgument, "the msal-keyring store needs a shared cache item: set CacheConfiguration.sharedCache")
        }
        return (cache, try SharedKeyringMedium(item, options: CacheGroup.keyringOptions(configuration)))
    }
}
