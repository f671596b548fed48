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
        var seen = Set<String>()
        var values: [String] = []
        for scope in scopes where !scope.isEmpty {
            if seen.insert(scope.lowercased()).inserted { values.append(scope) }
        }
        self.values = values
        self.matchKeys = seen.subtracting(Self.reserved).sorted()
    }

    /// Scopes from a space-separated string, such as an MSAL `target` or an OAuth `scope`.
    public init(target: String) {
        self.init(target.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).map(String.init))
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
        return Scopes(values.filter { !Self.reserved.contains($0.lowercased()) && !theirs.contains($0.lowercased()) })
    }

    /// A description for people; never contains a secret.
    public var description: String { values.joined(separator: " ") }

    /// Whether two values are equal (see the type's doc for what is compared).
    public static func == (lhs: Scopes, rhs: Scopes) -> Bool { lhs.matchKeys == rhs.matchKeys }
    /// Hashes what ``==`` compares.
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
