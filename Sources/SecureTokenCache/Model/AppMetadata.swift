/// Per-client metadata (`AppMetadata` section): above all, whether the client is in a FOCI family.
///
/// The typed properties are read from ``fields``, which holds every member as stored, unknown
/// ones included, in their original order; writing the entry back writes ``fields``.
public struct AppMetadata: Sendable, Hashable {
    /// The parsed members, shared by every copy: a copy of the entry is one retain.
    private final class Storage: Sendable {
        let members: EntryMembers
        let clientId: String
        let environment: Environment
        let familyId: String?
        let clientKey: HashedString

        init(members: EntryMembers, parts: borrowing EntryParts) {
            self.members = members
            clientId = parts.string(.clientId) ?? ""
            environment = parts.environment()
            familyId = parts.string(.familyId)
            clientKey = parts.lowercasedKey(.clientId)
        }
    }

    private let storage: Storage

    /// Every member of the entry as stored.
    public var fields: JSONObject { storage.members.object }
    /// The members as held: the record payload the entry was read from, or an object.
    var members: EntryMembers { storage.members }
    /// The client id.
    public var clientId: String { storage.clientId }
    /// The cloud host.
    public var environment: Environment { storage.environment }
    /// `"1"` for the Microsoft family; `""` means "known not to be in a family"; `nil` means
    /// "not known yet".
    public var familyId: String? { storage.familyId }
    /// The client id, lower-cased, with its hash: what the index files the metadata under.
    var clientKey: HashedString { storage.clientKey }

    /// An entry from its stored members.
    public init(fields: JSONObject) {
        self.init(members: .object(fields), parts: EntryParts(fields))
    }

    /// An entry from its stored members, with their known ones already picked out.
    init(members: EntryMembers, parts: borrowing EntryParts) {
        storage = Storage(members: members, parts: parts)
    }

    /// Whether two values are equal (see the type's doc for what is compared).
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.storage === rhs.storage || lhs.fields == rhs.fields }
    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(fields) }

    /// The key msal-python 1.39.0 files this entry under (not lower-cased).
    public var msalKey: String {
        "appmetadata-\(fields.string("environment") ?? "")-\(clientId)"
    }
}
