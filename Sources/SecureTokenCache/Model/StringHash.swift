import Glibc

/// A fast keyed 64-bit hash of a string's UTF-8 bytes: the precomputed hash of the index's keys
/// (``HashedString``, ``EntryID``).
///
/// Swift's `Hasher` runs SipHash over a `String` through its Unicode checks, which opening a
/// group pays once per entry for long cache keys. This folds eight bytes per step into two
/// independent lanes with a 64×64→128-bit multiplication (the mixing of wyhash). Equal strings (same bytes) hash
/// alike; canonically equivalent strings with different bytes need not, which cache keys (ASCII,
/// compared by their bytes) never are. The seed is random per process, so keys cannot be chosen
/// to collide by someone who does not know it; like Swift's own `Hasher`, it is fixed when the
/// environment sets `SWIFT_DETERMINISTIC_HASHING` (the benchmarks' allocation counts depend on
/// the shapes hashes give the index's tries).
enum StringHash {
    /// Drawn once per process, or fixed (see the type's doc).
    private static let seed: UInt64 =
        getenv("SWIFT_DETERMINISTIC_HASHING") != nil ? 0x243F_6A88_85A3_08D3 : UInt64.random(in: .min ... .max)

    /// The hash of `string`'s UTF-8 bytes.
    static func hash(_ string: String) -> Int {
        if let hash = string.utf8.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0)) }) { return hash }
        return Array(string.utf8).withUnsafeBytes { hash($0) }
    }

    /// The hash of `bytes`.
    static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        Int(truncatingIfNeeded: hash(bytes, seed: seed))
    }

    /// The hash of `bytes` under `seed`: eight bytes per step, each folded in with a 64×64→128-bit
    /// multiplication (the mixing of wyhash), in two independent lanes so the multiplications
    /// overlap. ``RecordNameHash`` uses it unkeyed.
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        var lane0 = seed ^ UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15
        var lane1 = seed ^ 0xD6E8_FEB8_6659_FD93
        var offset = 0
        while bytes.count - offset >= 16 {
            lane0 = mix(lane0 ^ UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
            lane1 = mix(lane1 ^ UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
            offset += 16
        }
        var tail0: UInt64 = 0
        var tail1: UInt64 = 0
        if bytes.count - offset >= 8 {
            tail0 = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
            for (shift, byte) in zip(stride(from: UInt64(0), to: 64, by: 8), bytes[offset...]) { tail1 |= UInt64(byte) << shift }
        } else {
            for (shift, byte) in zip(stride(from: UInt64(0), to: 64, by: 8), bytes[offset...]) { tail0 |= UInt64(byte) << shift }
        }
        return mix(mix(lane0 ^ tail0) ^ lane1 ^ tail1 ^ seed)
    }

    /// Folds the two halves of `value` × a large odd constant into one word.
    @inline(__always)
    private static func mix(_ value: UInt64) -> UInt64 {
        let product = value.multipliedFullWidth(by: 0xA076_1D64_78BD_642F)
        return product.high ^ product.low
    }
}
