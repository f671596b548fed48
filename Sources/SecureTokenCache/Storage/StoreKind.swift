/// A kind of store, as ``CacheConfiguration/store``, ``StoreDescription/kind`` and
/// `cachetool --store` name it.
///
/// Each backend declares its own kind beside its code (``file``, ``keyring``, ``memory``);
/// ``auto`` is the engine's choice between the keyring and the file store, and only a
/// configuration names it.
public struct StoreKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The kind's name, such as `file`.
    public let rawValue: String

    /// The kind named `rawValue` (not checked: ``CacheGroup/open(_:configuration:)`` says when
    /// no backend has that kind).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The kind's name.
    public var description: String { rawValue }

    /// The Secret Service when it is reachable and unlocked, else the file store; never a silent
    /// fall back to weaker protection for a group that already lives in the keyring.
    public static let auto = StoreKind(rawValue: "auto")

    /// Every kind a configuration may name: ``auto`` and each backend's.
    public static var all: [StoreKind] { [.auto] + StoreBackends.all.map { $0.kind } }
}
