/// The `home_account_id` of MSAL: `"<uid>.<utid>"` from the token response's `client_info`,
/// the id-token `sub` for ADFS without it.
///
/// It identifies one user across tenants and apps; comparisons are case-insensitive.
public struct HomeAccountId: Sendable, Hashable, CustomStringConvertible {
    /// The identifier exactly as stored.
    public let rawValue: String
    /// Lower-cased, for comparisons.
    let normalised: String
    /// `normalised.hashValue`, computed once (lookups hash it on every call otherwise).
    let normalisedHash: Int
    /// The home tenant id, lower-cased, computed once.
    let normalisedTenantId: String?

    /// An identifier from its stored form.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
        self.normalised = rawValue.asciiLowercased
        self.normalisedHash = normalised.hashValue
        normalisedTenantId = normalised.suffix(afterLast: UInt8(ascii: ".")).flatMap { $0.isEmpty ? nil : String($0) }
    }

    /// An identifier from `client_info`'s `uid` and `utid`.
    public init(uid: String, utid: String) { self.init("\(uid).\(utid)") }

    /// The user's object id in the home tenant (`uid`): the part before the last dot.
    public var objectId: String {
        rawValue.prefix(beforeLast: UInt8(ascii: ".")).map(String.init) ?? rawValue
    }

    /// The home tenant id (`utid`): the part after the last dot, or `nil` (ADFS).
    public var tenantId: String? {
        rawValue.suffix(afterLast: UInt8(ascii: ".")).flatMap { $0.isEmpty ? nil : String($0) }
    }

    /// A description for people; never contains a secret.
    public var description: String { rawValue }

    /// Whether two values are equal (see the type's doc for what is compared).
    public static func == (lhs: HomeAccountId, rhs: HomeAccountId) -> Bool { lhs.normalised == rhs.normalised }
    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(normalised) }
}
