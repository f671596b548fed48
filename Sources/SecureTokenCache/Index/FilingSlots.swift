/// Where the members an entry is filed by are in a decoder's ``StringInterner``: one slot per
/// ``FilingPart``, -1 for a member with no text (missing, or not a string or number).
struct FilingSlots: Sendable {
    /// By `FilingPart.rawValue`.
    private var slots = InlineArray<8, Int32>(repeating: -1)

    /// The slots of the members in `texts`, by member code.
    init(_ texts: borrowing InlineArray<32, Int32>) {
        for part in FilingPart.allCases { slots[part.rawValue] = texts[Int(part.field.rawValue)] }
    }

    /// The slot of `part`'s member.
    subscript(part: FilingPart) -> Int32 { slots[part.rawValue] }
}
