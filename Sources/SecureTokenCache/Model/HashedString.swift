/// A string with its hash computed once, for map keys hashed on every insert and lookup: an
/// account id is 73 characters, and opening a group files every entry under several such keys.
///
/// Equal strings have equal hashes, so comparing the stored hashes first only skips work.
struct HashedString: Hashable, Sendable, CustomStringConvertible {
    /// The string.
    let value: String
    /// The string's ``StringHash``.
    let prehash: Int

    /// `value` with its hash.
    init(_ value: String) {
        self.value = value
        prehash = StringHash.hash(value)
    }

    /// Feeds the stored hash to `hasher`.
    func hash(into hasher: inout Hasher) { hasher.combine(prehash) }

    /// Whether the strings are equal.
    static func == (lhs: HashedString, rhs: HashedString) -> Bool {
        lhs.prehash == rhs.prehash && lhs.value == rhs.value
    }

    /// The string.
    var description: String { value }

    /// The empty string.
    static let empty = HashedString("")
    /// `bearer`, the lower-cased default token type.
    static let bearer = HashedString("bearer")
}
