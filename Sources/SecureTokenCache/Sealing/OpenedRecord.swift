/// A record change as it opens out of a record sealed on its own (the older format).
struct OpenedRecord: Sendable {
    /// The change (a put with its payload, or a delete).
    var change: RecordChange
    /// The sequence number it was sealed with.
    var sequence: UInt64
    /// The keyed hash of its name.
    var nameTag: NameTag
}
