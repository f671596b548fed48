/// Bytes eight at a time, in a little-endian word: how long text (keys, ids, tokens) is
/// scanned, compared and lowered without a step per byte.
///
/// The tests set the high bit of each byte that passes, exactly for the lowest such byte of the
/// word (a borrow may set the bits of later bytes), so the lowest bit set is the first match.
enum WordBytes {
    /// The high bit of every byte.
    static let high: UInt64 = 0x8080_8080_8080_8080

    /// The bytes of `bytes` from `offset` on, up to eight, the missing ones zero.
    @inline(__always)
    static func load(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        let count = bytes.count - offset
        if count >= 8 { return bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }
        // Fewer than eight: two loads that overlap in the middle, whose bytes there agree.
        if count >= 4 {
            let low = UInt64(bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            let high = UInt64(bytes.loadUnaligned(fromByteOffset: offset + count - 4, as: UInt32.self))
            return low | high << UInt64(8 * (count - 4))
        }
        if count >= 2 {
            let low = UInt64(bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            let high = UInt64(bytes.loadUnaligned(fromByteOffset: offset + count - 2, as: UInt16.self))
            return low | high << UInt64(8 * (count - 2))
        }
        return count == 1 ? UInt64(bytes[offset]) : 0
    }

    /// The bytes of `word` equal to `byte`.
    @inline(__always)
    static func equal(_ word: UInt64, _ byte: UInt8) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let difference = word ^ ones &* UInt64(byte)
        return (difference &- ones) & ~difference & high
    }

    /// The bytes of `word` equal to `byte`, each exactly: no borrow crosses from one byte to
    /// the next, so every bit set is a match (where ``equal(_:_:)`` is exact only for the
    /// lowest).
    @inline(__always)
    static func exactlyEqual(_ word: UInt64, _ byte: UInt8) -> UInt64 {
        let low: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        let difference = word ^ 0x0101_0101_0101_0101 &* UInt64(byte)
        return ~(((difference & low) &+ low) | difference | low)
    }

    /// The bytes of `word` below `bound` (at most 0x80).
    @inline(__always)
    static func below(_ word: UInt64, _ bound: UInt8) -> UInt64 {
        (word &- 0x0101_0101_0101_0101 &* UInt64(bound)) & ~word & high
    }
}
