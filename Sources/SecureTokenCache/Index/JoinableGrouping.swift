/// A ``Grouping`` whose key type only its map's ``MapRule`` knows: what a ``BulkFiling`` holds for
/// each map, so that the parts several threads gathered can be joined without knowing it (the
/// map's ``IndexMapRule/join(_:_:offset:)`` does, with code compiled for its key type).
protocol JoinableGrouping: Sendable {}

extension Grouping: JoinableGrouping {}
