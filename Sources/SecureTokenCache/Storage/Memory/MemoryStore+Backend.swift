extension StoreKind {
    /// Process memory only; nothing is written.
    public static let memory = StoreKind(rawValue: "memory")
}

extension MemoryStore: StoreBackend {
    static var kind: StoreKind { .memory }
    static var isDurable: Bool { false }

    static func openGroup(_ name: String, _ configuration: CacheConfiguration, reason: String) throws -> CacheGroup {
        try CacheGroup(
            name: name, store: MemoryStore(name: name), logger: configuration.logger, memoryLimit: configuration.memoryLimit)
    }

    /// Always: a memory group is made empty for whoever asks, and opening it creates nothing
    /// that outlives the process.
    static func holdsGroup(_ name: String, _ configuration: CacheConfiguration) throws -> Bool { true }

    static func retire(_ name: String, _ configuration: CacheConfiguration) throws {}
}
