/// Per-client metadata (`AppMetadata` section): above all, whether the client is in a FOCI family.
///
/// The typed properties are read from ``fields``, which holds every member as stored, unknown
/// ones included, in their original order; writing the entry back writes ``fields``. Two entries
/// are equal when their ``fields`` are.
public struct AppMetadata: Sendable, Hashable, EntryModel {
    /// The members the properties return, parsed once when the entry is read: one value per
    /// property of the same name.
    struct Parsed: ParsedMembers {
        let clientId: String
        let environment: Environment
        let familyId: String?
        let clientKey: HashedString

        init(_ parts: borrowing EntryParts) {
            clientId = parts.string(.clientId) ?? ""
            environment = parts.environment()
            familyId = parts.string(.familyId)
            clientKey = parts.lowercasedKey(.clientId)
        }
    }

    /// The members and their parsed values, shared by every copy of the entry.
    let storage: EntryStorage<Parsed>

    /// The client id.
    public var clientId: String { parsed.clientId }
    /// The cloud host.
    public var environment: Environment { parsed.environment }
    /// `"1"` for the Microsoft family; `""` means "known not to be in a family"; `nil` means
    /// "not known yet".
    public var familyId: String? { parsed.familyId }
    /// The client id, lower-cased, with its hash: what the index files the metadata under.
    var clientKey: HashedString { parsed.clientKey }

    /// Every member of the entry as stored.
    public var fields: JSONObject { members.object }

    /// The key msal-python 1.39.0 files this entry under (not lower-cased).
    public var msalKey: String {
        "appmetadata-\(members.string(.environment) ?? "")-\(clientId)"
    }
}

extension AppMetadata {
    /// An entry from its stored members.
    public init(fields: JSONObject) { self.init(object: fields) }
}
