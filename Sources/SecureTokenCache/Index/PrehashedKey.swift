/// A map key that carries its hash, computed once when the key was made (see ``HashedString``).
protocol PrehashedKey: Hashable, Sendable {
    /// A well-mixed hash; equal keys have equal ones.
    var prehash: Int { get }
}

extension HashedString: PrehashedKey {}
