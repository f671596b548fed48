/// The identity of a record in a group: its kind and a name unique within that kind (for an
/// MSAL entry, its cache key).
struct RecordID: Sendable, Hashable {
    var kind: RecordKind
    var name: String
}
