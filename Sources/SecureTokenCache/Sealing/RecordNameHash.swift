/// A cheap 64-bit hash of a record's identity (kind and name bytes), for finding the records a
/// log names more than once.
///
/// Swift's `Hasher` (SipHash over a `String`, through its Unicode checks) costs far more per name,
/// and needs the name as a `String` already in cache; this runs over the bytes as a batch opens,
/// while they are in cache anyway. Eight bytes per step, each folded in with a 64×64→128-bit
/// multiplication (the mixing of wyhash), in two independent lanes so the multiplications
/// overlap. Not keyed and not cryptographic: a collision only costs a comparison of the names,
/// and the names come out of authenticated boxes, so nobody can choose them to collide.
enum RecordNameHash {
    /// The hash of the record of `kind` named by the UTF-8 bytes `name`.
    static func hash(kind: RecordKind, name: UnsafeRawBufferPointer) -> UInt64 {
        var lane0 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(kind.rawValue) ^ UInt64(name.count) << 8
        var lane1: UInt64 = 0xD6E8_FEB8_6659_FD93
        var offset = 0
        while name.count - offset >= 16 {
            lane0 = mix(lane0 ^ UInt64(littleEndian: name.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
            lane1 = mix(lane1 ^ UInt64(littleEndian: name.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
            offset += 16
        }
        var tail0: UInt64 = 0
        var tail1: UInt64 = 0
        var shift: UInt64 = 0
        while offset < name.count {
            if shift < 64 {
                tail0 |= UInt64(name[offset]) << shift
            } else {
                tail1 |= UInt64(name[offset]) << (shift - 64)
            }
            shift += 8
            offset += 1
        }
        return mix(mix(lane0 ^ tail0) ^ lane1 ^ tail1)
    }

    /// ``hash(kind:name:)`` of a record identity held as a `RecordID`.
    static func hash(_ id: RecordID) -> UInt64 {
        var name = id.name
        return name.withUTF8 { hash(kind: id.kind, name: UnsafeRawBufferPointer($0)) }
    }

    /// Folds the two halves of `value` × a large odd constant into one word.
    @inline(__always)
    private static func mix(_ value: UInt64) -> UInt64 {
        let product = value.multipliedFullWidth(by: 0xA076_1D64_78BD_642F)
        return product.high ^ product.low
    }
}
