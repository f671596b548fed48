/// The key type of a map of ``IndexMaps``: made of the ``FilingPart``s its ``MapFiling`` lists,
/// in that order.
protocol FilingKey: PrehashedKey {
    /// The key whose part number `n` is `part(n)`.
    init(filingParts part: (Int) -> HashedString)
}

extension HashedString: FilingKey {
    /// The one part.
    init(filingParts part: (Int) -> HashedString) { self = part(0) }
}
