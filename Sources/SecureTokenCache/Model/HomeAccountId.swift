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
        self.normalised = rawValue.lowercased()
        self.normalisedHash = normalised.hashValue
        if let dot = normalised.lastIndex(of: "."), normalised.index(after: dot) < normalised.endIndex {
            normalisedTenantId = String(normalised[normalised.index(after: dot)...])
        } else {
            normalisedTenantId = nil
        }
    }

    /// An identifier from `client_info`'s `uid` and `utid`.
    public init(uid: String, utid: String) { self.init("\(uid).\(utid)") }

    /// The user's object id in the home tenant (`uid`): the part before the last dot.
    public var objectId: String {
        guard let dot = rawValue.lastIndex(of: ".") else { return rawValue }
        return String(rawValue[..<dot])
    }

    /// The home tenant id (`utid`): the part after the last dot, or `nil` (ADFS).
    public var tenantId: String? {
        guard let dot = rawValue.lastIndex(of: ".") else { return nil }
        let tenant = rawValue[rawValue.index(after: dot)...]
        return tenant.isEmpty ? nil : String(tenant)
    }

    /// A description for people; never contains a secret.
    public var description: String { rawValue }

    /// Whether two values are equal (see the type's doc for what is compared).
    public static func == (lhs: HomeAccountId, rhs: HomeAccountId) -> Bool { lhs.normalised == rhs.normalised }
    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(normalised) }
}
