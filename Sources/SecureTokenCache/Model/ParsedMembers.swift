/// The typed values an entry type reads from its known members (see ``EntryModel``).
protocol ParsedMembers: Sendable {
    /// Reads the values from the members `parts` picked out; the same members always give the
    /// same values, so an entry read from a record and one built from an object agree.
    init(_ parts: borrowing EntryParts)
}
