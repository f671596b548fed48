/// Where the members an entry is filed by are in a decoder's ``StringInterner``: one slot per
/// ``FilingPart``, -1 for a member with no text (missing, or not a string or number).
struct FilingSlots: Sendable {
    /// By `FilingPart.rawValue`.
    private var slots = InlineArray<9, Int32>(repeating: -1)

    /// The slots of the known members in `texts`, by member code, and of the assertion hash.
    init(_ texts: borrowing InlineArray<32, Int32>, assertion: Int32) {
        for part in FilingPart.allCases {
            if let field = part.field {
                slots[part.rawValue] = texts[Int(field.rawValue)]
            } else {
                slots[part.rawValue] = assertion
            }
        }
    }

    /// The slot of `part`'s member.
    subscript(part: FilingPart) -> Int32 { slots[part.rawValue] }
}
