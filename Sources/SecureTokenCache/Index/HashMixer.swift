/// The one mixing step of the index's hashing: where a hash starts probing in a ``NumberTable``,
/// and how the hashes of a composite key's parts fold into one (``PrehashedKey``).
///
/// A multiplication by the odd constant of Fibonacci hashing spreads every input bit over the
/// high half of the product; folding the high half onto the low one makes the low bits, which a
/// table's mask keeps, depend on the whole input. The hashes it mixes are already well spread
/// (``StringHash``), so one step suffices, and no key is chosen by anyone who could make them
/// collide.
enum HashMixer {
    /// `value` mixed: equal inputs give equal outputs, and each output bit depends on every input
    /// bit.
    @inline(__always)
    static func mix(_ value: UInt64) -> UInt64 {
        let product = value &* 0x9E37_79B9_7F4A_7C15
        return product ^ (product >> 32)
    }

    /// `hash` folded into `combined` (start from ``seed``); order-sensitive.
    @inline(__always)
    static func combine(_ combined: Int, _ hash: Int) -> Int {
        Int(truncatingIfNeeded: mix(UInt64(bitPattern: Int64(combined)) ^ UInt64(bitPattern: Int64(hash))))
    }

    /// What combining starts from.
    static let seed = 0x243F_6A88_85A3_08D3

    /// The slot of a table of `mask + 1` slots (a power of two) where probing for `hash` starts.
    @inline(__always)
    static func slot(_ hash: Int, mask: Int) -> Int {
        Int(truncatingIfNeeded: mix(UInt64(bitPattern: Int64(hash)))) & mask
    }
}
