/// A cheap 64-bit hash of a record's identity (kind and name bytes), for finding the records a
/// log names more than once.
///
/// Swift's `Hasher` (SipHash over a `String`, through its Unicode checks) costs far more per name,
/// and needs the name as a `String` already in cache; this runs over the bytes as a batch opens,
/// while they are in cache anyway (``StringHash``'s fold). Not keyed and not cryptographic: a
/// collision only costs a comparison of the names, and the names come out of authenticated
/// boxes, so nobody can choose them to collide.
enum RecordNameHash {
    /// The hash of the record of `kind` named by the UTF-8 bytes `name`.
    static func hash(kind: RecordKind, name: UnsafeRawBufferPointer) -> UInt64 {
        StringHash.hash(name, seed: 0x9E37_79B9_7F4A_7C15 ^ UInt64(kind.rawValue) << 56)
    }

    /// ``hash(kind:name:)`` of a record identity held as a `RecordID`.
    static func hash(_ id: RecordID) -> UInt64 {
        var name = id.name
        return name.withUTF8 { hash(kind: id.kind, name: UnsafeRawBufferPointer($0)) }
    }
}
