import Testing

@testable import SecureTokenCache

/// A map key with only 13 distinct hashes, so that the tables' probing past colliding keys is
/// exercised on every test.
struct CollidingKey: PrehashedKey, ExpressibleByIntegerLiteral, Comparable, CustomStringConvertible {
    let value: Int
    init(_ value: Int) { self.value = value }
    init(integerLiteral value: Int) { self.value = value }
    var prehash: Int { value % 13 }
    var description: String { "\(value)" }
    static func < (lhs: CollidingKey, rhs: CollidingKey) -> Bool { lhs.value < rhs.value }
}
