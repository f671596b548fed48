/// What a group is stored in, where, how it is protected and why it was chosen.
public struct StoreDescription: Sendable, Hashable {
    /// The kind of store.
    public typealias Kind = StoreKind

    /// The kind of store.
    public var kind: Kind
    /// Where the data lives: a directory, or a Secret Service collection.
    public var location: String
    /// What protects the data at rest.
    public var protection: ProtectionLevel
    /// Why this store was chosen (for `auto`), in a sentence.
    public var reason: String
    /// The folder of the group's coordination files (lock, refresh locks, shared counter), which
    /// every process that opens the group uses whatever its environment; `nil` for a memory group.
    public var coordinationDirectory: String?
    /// What the user should know about the group's state (for example processes that do not
    /// share its coordination folder); empty when all is well. Never holds a secret.
    public var warnings: [String] = []

    /// A description with the given parts.
    public init(kind: Kind, location: String, protection: ProtectionLevel, reason: String, coordinationDirectory: String? = nil) {
        self.kind = kind
        self.location = location
        self.protection = protection
        self.reason = reason
        self.coordinationDirectory = coordinationDirectory
    }
}
