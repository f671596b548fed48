/// The identity of a record in a group: its kind and a name unique within that kind (for an
/// MSAL entry, its cache key).
struct RecordID: Sendable, Hashable {
    var kind: RecordKind
    var name: String

    /// Hashes the kind and the name's ``StringHash``: a name is a cache key of a hundred or more
    /// characters, which `Hasher` would take through its Unicode checks on every lookup.
    func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(StringHash.hash(name))
    }
}
