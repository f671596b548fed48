/// A JSON value that keeps what other SDKs wrote: member order, and numbers as their literal text.
///
/// MSAL caches carry fields this engine does not know (`enrollment_id`, `ext`, ...); they travel
/// as `JSONValue`s and are written back unchanged.
public enum JSONValue: Sendable, Hashable {
    /// A string.
    case string(String)
    /// A number, kept as its JSON literal (for example `"1700000000"` or `"1.5e3"`).
    case number(String)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null
    /// An array.
    case array([JSONValue])
    /// An object, in member order.
    case object(JSONObject)

    /// The string, if this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The value as a whole number of seconds: a decimal string (MSAL's form) or a JSON number.
    public var integerValue: Int64? {
        switch self {
        case .string(let text): return Int64(text)
        case .number(let text):
            if let whole = Int64(text) { return whole }
            if let real = Double(text), real.isFinite, abs(real) < 9e18 { return Int64(real) }
            return nil
        default: return nil
        }
    }
}

/// A JSON object that keeps its members in order, as Python's `dict` does.
///
/// Setting an existing member keeps its position; a new member goes to the end.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// The members in order.
    public private(set) var members: [(key: String, value: JSONValue)]

    /// An object with the given members; a repeated key keeps its first position and last value.
    public init(_ members: [(key: String, value: JSONValue)] = []) {
        guard members.count > 16 else {
            // Almost every object has no repeated key: check, and keep the array as it is.
            var repeated = false
            search: for later in members.indices.dropFirst() {
                for earlier in 0..<later where members[earlier].key == members[later].key {
                    repeated = true
                    break search
                }
            }
            guard repeated else {
                self.members = members
                return
            }
            self.members = []
            self.members.reserveCapacity(members.count)
            for (key, value) in members { self[key] = value }
            return
        }
        // Large objects (a cache section): find repeated keys by hashing, not by scanning.
        var position: [String: Int] = [:]
        position.reserveCapacity(members.count)
        var unique: [(key: String, value: JSONValue)] = []
        unique.reserveCapacity(members.count)
        for member in members {
            if let existing = position[member.key] {
                unique[existing].value = member.value
            } else {
                position[member.key] = unique.count
                unique.append(member)
            }
        }
        self.members = unique
    }

    /// An object from a literal, in the literal's order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements.map { (key: $0.0, value: $0.1) })
    }

    /// The value of a member, or `nil`; setting `nil` removes the member.
    public subscript(key: String) -> JSONValue? {
        get {
            for member in members where member.key == key { return member.value }
            return nil
        }
        set {
            if let position = members.firstIndex(where: { $0.key == key }) {
                if let newValue {
                    members[position].value = newValue
                } else {
                    members.remove(at: position)
                }
            } else if let newValue {
                members.append((key: key, value: newValue))
            }
        }
    }

    /// Appends a member known not to be present yet (O(1); for building large objects).
    mutating func appendUnchecked(key: String, value: JSONValue) {
        members.append((key: key, value: value))
    }

    /// The member names in order.
    public var keys: [String] { members.map(\.key) }

    /// The number of members.
    public var count: Int { members.count }

    /// Iterates the members in order.
    public func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> {
        members.makeIterator()
    }

    /// Whether two values are equal (see the type's doc for what is compared).
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(members.count)
        for member in members {
            hasher.combine(member.key)
            hasher.combine(member.value)
        }
    }
}
