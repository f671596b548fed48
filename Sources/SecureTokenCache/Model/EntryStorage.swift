/// One entry's members and the values parsed from them, shared by every copy of the entry: copying
/// an entry is one retain, and its members are parsed once, when the entry is read.
///
/// Two storages are equal when their members are, in the same order; the parsed values are
/// derived from the members, so they are neither compared nor hashed.
final class EntryStorage<Parsed: ParsedMembers>: Hashable, Sendable {
    /// The members as held: the record payload the entry was read from, or an object.
    let members: EntryMembers
    /// The typed values the entry's properties return.
    let parsed: Parsed

    /// Storage for `members`, whose known ones `parts` picked out.
    init(members: EntryMembers, parts: borrowing EntryParts) {
        self.members = members
        parsed = Parsed(parts)
    }

    /// Storage for `members`, the same members as those `parsed` was read from, held another way.
    init(members: EntryMembers, parsed: Parsed) {
        self.members = members
        self.parsed = parsed
    }

    /// Whether both hold the same members in the same order; one storage is equal to itself
    /// without reading its members (a payload is decoded again to be read).
    static func == (lhs: EntryStorage, rhs: EntryStorage) -> Bool {
        lhs === rhs || lhs.members.object == rhs.members.object
    }

    /// Hashes what ``==`` compares.
    func hash(into hasher: inout Hasher) { hasher.combine(members.object) }
}
