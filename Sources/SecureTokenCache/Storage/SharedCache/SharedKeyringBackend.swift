/// The backend of ``StoreKind/msalKeyring``: a shared cache kept as one Secret Service item.
enum SharedKeyringBackend: StoreBackend {
    static var kind: StoreKind { .msalKeyring }
    static var isDurable: Bool { true }

    static func openGroup(_ name: String, _ configuration: CacheConfiguration, reason: String) throws -> CacheGroup {
        let (cache, medium) = try location(configuration)
        return try SharedCacheStore.openGroup(
            name, configuration, cache: cache, medium: medium, protection: .keyringItem, reason: reason)
    }

    /// Whether the signal file and the item exist, the item found by a search that neither
    /// unlocks nor prompts. Every tool touches the signal file when it writes the item, and
    /// msal-extensions never reads an item without one, so without it there is no cache to open
    /// and the Secret Service is not asked.
    static func holdsGroup(_ name: String, _ configuration: CacheConfiguration) throws -> Bool {
        let medium = try location(configuration).medium
        return try medium.version() != nil && medium.exists()
    }

    /// Nothing: the emptied document stays, so the other tools see a cache with no sign-in
    /// rather than a missing one.
    static func retire(_ name: String, _ configuration: CacheConfiguration) throws {}

    private static func location(_ configuration: CacheConfiguration) throws -> (MSALSharedCache, medium: SharedKeyringMedium) {
        guard let cache = configuration.sharedCache, case .keyring(let item) = cache.location else {
            throw TokenCacheError(
                .invalidArgument, "the msal-keyring store needs a shared cache item: set CacheConfiguration.sharedCache")
        }
        try cache.requireAbsolutePaths()
        return (cache, try SharedKeyringMedium(item, options: CacheGroup.keyringOptions(configuration)))
    }
}
