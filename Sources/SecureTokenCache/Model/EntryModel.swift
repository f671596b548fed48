/// What the five entry types (``AccessToken``, ``RefreshToken``, ``IdToken``, ``Account``,
/// ``AppMetadata``) share: their members held in one ``EntryStorage``, parsed once into the
/// type's ``ParsedMembers``.
///
/// A conforming type stores nothing but its storage, so the `Hashable` conformance the compiler
/// derives compares and hashes the members (see ``EntryStorage``), and its memberwise
/// `init(storage:)` is the requirement below; its public `init(fields:)` sits in an extension so
/// that the compiler still derives that one.
protocol EntryModel: Hashable, Sendable {
    /// The typed values the entry's properties return.
    associatedtype Parsed: ParsedMembers

    /// The entry's members and parsed values.
    var storage: EntryStorage<Parsed> { get }

    /// The entry over `storage`.
    init(storage: EntryStorage<Parsed>)
}

extension EntryModel {
    /// The members as held: the record payload the entry was read from, or an object.
    var members: EntryMembers { storage.members }

    /// The typed values the entry's properties return.
    var parsed: Parsed { storage.parsed }

    /// An entry from its stored members, with their known ones already picked out.
    init(members: EntryMembers, parts: borrowing EntryParts) {
        self.init(storage: EntryStorage(members: members, parts: parts))
    }

    /// An entry from its stored members as an object.
    init(object fields: JSONObject) {
        self.init(members: .object(fields), parts: EntryParts(fields))
    }

    /// msal-python 1.39.0's key for an entry of a user: `home_account_id`, `environment` and
    /// `rest`, joined by `-` and lower-cased, a missing member written as `""` (msal-python's
    /// `None`).
    func userKey(_ rest: [String]) -> String {
        var parts = [members.string(.homeAccountId) ?? "", members.string(.environment) ?? ""]
        parts.append(contentsOf: rest)
        return String.asciiLowercased(joining: parts, separator: UInt8(ascii: "-"))
    }

    /// The key of `kind` made straight from the payload the members are held as, when ``KeyText``
    /// makes one of it (every member it is made of a string or absent); `nil` otherwise. It is
    /// ``userKey(_:)`` of the parts the kind's key names, without reading each member into a
    /// string of its own first: for callers whose key has no further part (an extended cache key,
    /// an assertion).
    func payloadKey(_ kind: CredentialKind) -> String? {
        guard case .payload(let payload) = members else { return nil }
        return KeyText.derivedString(kind, payload: payload)
    }
}
