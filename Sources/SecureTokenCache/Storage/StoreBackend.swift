/// A backend under the store seam (``CacheStore``), as ``CacheGroup`` opens, finds and retires
/// it. Each backend conforms beside its own code; ``StoreBackends/all`` lists them.
protocol StoreBackend {
    /// The kind configurations and `cachetool --store` name the backend by.
    static var kind: StoreKind { get }
    /// Whether a group outlives the process, so that it can be moved in or out.
    static var isDurable: Bool { get }

    /// Opens group `name` as `configuration` says, creating it if it is new; `reason` says why
    /// this store was chosen.
    static func openGroup(_ name: String, _ configuration: CacheConfiguration, reason: String) throws -> CacheGroup

    /// Whether group `name` exists in this store (or opening it creates nothing durable), found
    /// without creating, unlocking or changing anything.
    static func holdsGroup(_ name: String, _ configuration: CacheConfiguration) throws -> Bool

    /// After the group moved away: makes sure `auto` no longer finds it here.
    static func retire(_ name: String, _ configuration: CacheConfiguration) throws
}

/// Every backend the engine can open.
enum StoreBackends {
    /// The backends: the one line a new backend adds.
    static let all: [any StoreBackend.Type] = [
        MemoryStore.self, FileStore.self, KeyringStore.self, SharedFileBackend.self, SharedKeyringBackend.self,
    ]

    /// The backend of `kind`.
    ///
    /// - Throws: ``TokenCacheError/Code/invalidArgument`` naming the kinds there are.
    static func backend(_ kind: StoreKind) throws -> any StoreBackend.Type {
        guard let backend = all.first(where: { $0.kind == kind }) else {
            throw TokenCacheError(
                .invalidArgument,
                "there is no \(kind) store; the stores are \(StoreKind.all.map(\.rawValue).joined(separator: ", "))")
        }
        return backend
    }
}
