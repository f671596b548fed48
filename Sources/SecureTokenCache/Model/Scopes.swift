/// A set of OAuth scopes with MSAL's matching rules.
///
/// Matching is case-insensitive and ignores the OIDC scopes `openid`, `profile` and
/// `offline_access`, which servers add to every grant (our rule 2). The original spelling and
/// order are kept for display and for the cache's `target` field.
public struct Scopes: Sendable, Hashable, CustomStringConvertible {
    /// The OIDC scopes that never take part in matching.
    public static let reserved: Set<String> = ["openid", "profile", "offline_access"]

    /// The scopes as given, without duplicates (first spelling wins), in their original order.
    public let values: [String]
    /// Lower-cased, sorted, unique, reserved scopes removed: what matching compares.
    let matchKeys: [String]

    /// Scopes from a list; empty strings are dropped.
    public init(_ scopes: some Sequence<String>) {
        // A grant has a handful of scopes: linear searches beat hashing them into sets.
        var lowered: [String] = []
        var values: [String] = []
        lowered.reserveCapacity(scopes.underestimatedCount)
        values.reserveCapacity(scopes.underestimatedCount)
        for scope in scopes where !scope.isEmpty {
            let key = scope.asciiLowercased
            if !lowered.contains(key) {
                lowered.append(key)
                values.append(scope)
            }
        }
        self.values = values
        self.matchKeys = lowered.filter { !Self.isReserved($0) }.sorted()
    }

    /// Scopes from a space-separated string, such as an MSAL `target` or an OAuth `scope`.
    public init(target: String) {
        var parts: [String] = []
        var text = target
        text.withUTF8 { bytes in
            // Separators are ASCII, so each part between them is whole UTF-8.
            var start = 0
            for position in 0...bytes.count {
                if position < bytes.count, bytes[position] != 0x20, bytes[position] != 0x09, bytes[position] != 0x0A { continue }
                if start < position {
                    parts.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self))
                }
                start = position + 1
            }
        }
        self.init(parts)
    }

    /// Whether a lower-cased scope is one of ``reserved``.
    private static func isReserved(_ lowered: String) -> Bool {
        switch lowered {
        case "openid", "profile", "offline_access": true
        default: false
        }
    }

    /// The `target` msal-python writes: the scopes sorted by code point on their original
    /// case and joined by one space.
    public var target: String { values.sorted().joined(separator: " ") }

    /// Whether there is no scope to match (only reserved scopes, or none at all).
    public var isEmptyForMatching: Bool { matchKeys.isEmpty }

    /// Whether every scope of `self` (reserved ones aside) is in `other`, case-insensitively.
    public func isSubset(of other: Scopes) -> Bool {
        var j = 0
        let theirs = other.matchKeys
        for key in matchKeys {
            while j < theirs.count, theirs[j] < key { j += 1 }
            guard j < theirs.count, theirs[j] == key else { return false }
            j += 1
        }
        return true
    }

    /// Whether `self` and `other` share a scope (reserved ones aside), case-insensitively.
    public func intersects(_ other: Scopes) -> Bool {
        var i = 0
        var j = 0
        let mine = matchKeys
        let theirs = other.matchKeys
        while i < mine.count, j < theirs.count {
            if mine[i] == theirs[j] { return true }
            if mine[i] < theirs[j] { i += 1 } else { j += 1 }
        }
        return false
    }

    /// The scopes of `self` (reserved ones aside) that `other` lacks, in `self`'s spelling.
    public func subtracting(_ other: Scopes) -> Scopes {
        let theirs = Set(other.matchKeys)
        return Scopes(values.filter { !Self.isReserved($0.asciiLowercased) && !theirs.contains($0.asciiLowercased) })
    }

    /// A description for people; never contains a secret.
    public var description: String { values.joined(separator: " ") }

    /// Whether two values are equal (see the type's doc for what is compared).
    public static func == (lhs: Scopes, rhs: Scopes) -> Bool { lhs.matchKeys == rhs.matchKeys }
    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(matchKeys) }
}

extension Scopes: ExpressibleByArrayLiteral {
    /// Scopes from a literal list.
    public init(arrayLiteral elements: String...) { self.init(elements) }
}

extension Scopes {
    /// The scope that stands for a v1 (ADAL) resource at the v2 endpoint: `<resource>/.default`.
    ///
    /// The resource is kept verbatim, so one ending in `/` gives `//.default`
    /// (`https://management.core.windows.net/` → `https://management.core.windows.net//.default`,
    /// the audience Azure Resource Manager tokens carry), and one without gives `/.default`
    /// (`https://graph.microsoft.com` → `https://graph.microsoft.com/.default`). The two are
    /// different scopes: a token for one never answers a request for the other.
    public init(resource: String) {
        self.init([resource + "/.default"])
    }
}
