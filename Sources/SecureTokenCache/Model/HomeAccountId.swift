/// The `home_account_id` of MSAL: `"<uid>.<utid>"` from the token response's `client_info`,
/// the id-token `sub` for ADFS without it.
///
/// It identifies one user across tenants and apps; comparisons are case-insensitive.
public struct HomeAccountId: Sendable, Hashable, CustomStringConvertible {
    /// The parsed forms, shared by every copy: the index files every entry of a user under the
    /// same identifier, and a copy is one retain.
    private final class Storage: Sendable {
        let rawValue: String
        let key: HashedString
        let normalisedTenantId: String?
        let tenantKey: HashedString?

        init(_ rawValue: String) {
            self.rawValue = rawValue
            let normalised = rawValue.asciiLowercased
            key = HashedString(normalised)
            normalisedTenantId = normalised.suffix(afterLast: UInt8(ascii: ".")).flatMap { $0.isEmpty ? nil : String($0) }
            tenantKey = normalisedTenantId.map(HashedString.init)
        }
    }

    private let storage: Storage

    /// The identifier exactly as stored.
    public var rawValue: String { storage.rawValue }
    /// Lower-cased, for comparisons.
    var normalised: String { storage.key.value }
    /// Lower-cased with its hash: what the index files the user's entries under.
    var key: HashedString { storage.key }
    /// The home tenant id, lower-cased, computed once.
    var normalisedTenantId: String? { storage.normalisedTenantId }
    /// ``normalisedTenantId`` with its hash: the realm a lookup in the home tenant reads.
    var tenantKey: HashedString? { storage.tenantKey }

    /// An identifier from its stored form.
    public init(_ rawValue: String) {
        storage = Storage(rawValue)
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
    public static func == (lhs: HomeAccountId, rhs: HomeAccountId) -> Bool { lhs.storage === rhs.storage || lhs.key == rhs.key }
    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(normalised) }
}
