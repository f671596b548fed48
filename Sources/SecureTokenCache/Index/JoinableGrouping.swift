/// A ``Grouping`` whose key type only its map's ``MapRule`` knows: what a ``BulkFiling`` holds for
/// each map, so that the parts several threads gathered can be joined without knowing it.
protocol JoinableGrouping: Sendable {
    /// Adds every row of `other`, a grouping of the same key type, moved `offset` rows on, after
    /// the rows already here.
    mutating func append(joining other: any JoinableGrouping, offset: Int)
}

extension Grouping: JoinableGrouping {
    /// ``append(_:offset:)`` of another grouping of this key type.
    mutating func append(joining other: any JoinableGrouping, offset: Int) {
        guard let other = other as? Grouping else { preconditionFailure("joining groupings of two key types") }
        append(other, offset: offset)
    }
}
