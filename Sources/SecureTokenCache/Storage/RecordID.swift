/// The identity of a record in a group: its kind and a name unique within that kind (for an
/// MSAL entry, its cache key).
struct RecordID: Sendable, Hashable {
    /// The name, held as a string or as the payload it derives from (``KeyText``). First, so that
    /// the kind fits in what the name leaves of its last word.
    let nameText: KeyText
    let kind: RecordKind

    /// The record `name` of `kind`.
    init(kind: RecordKind, name: String) {
        self.init(kind: kind, nameText: KeyText(name))
    }

    /// The record of `kind` named by `nameText`.
    init(kind: RecordKind, nameText: KeyText) {
        self.nameText = nameText
        self.kind = kind
    }

    /// The name.
    var name: String { nameText.string }

    /// Hashes the kind and the name's ``StringHash``: a name is a cache key of a hundred or more
    /// characters, which `Hasher` would take through its Unicode checks on every lookup.
    func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(nameText.stringHash)
    }

    static func == (lhs: RecordID, rhs: RecordID) -> Bool {
        lhs.kind == rhs.kind && lhs.nameText == rhs.nameText
    }
}
