/// A map key that carries its hash, computed once when the key was made (see ``HashedString``).
protocol PrehashedKey: Hashable, Sendable {
    /// A well-mixed hash; equal keys have equal ones.
    var prehash: Int { get }
}

/// Numbers its keys 0, 1, 2… in the order they are added, and finds a key's number by the hash
/// the key carries: an open-addressing table of 32-bit numbers, probed linearly.
///
/// The base of every large map of the index (``LayeredMap``) and the gathering of a bulk build
/// (``Grouping``). A `Dictionary` runs SipHash over every key it hashes, even over a hash the key
/// already holds: about 150 instructions per lookup, paid for each of 17,500 entries in each of
/// several maps when a group opens. Here a lookup masks the key's hash and compares it with the
/// hashes stored beside the numbers before comparing keys.
struct KeyTable<Key: PrehashedKey>: Sendable {
    /// The keys, by number.
    private(set) var keys: [Key] = []
    /// The keys' hashes, by number.
    private var hashes: [Int] = []
    /// Numbers plus one (0: empty); a power of two in size, at most half full.
    private var slots: [Int32] = []
    private var mask = 0

    /// An empty table with room for `capacity` keys.
    init(capacity: Int = 0) {
        keys.reserveCapacity(capacity)
        hashes.reserveCapacity(capacity)
        if capacity > 0 { rehash(slotCount: Self.slotCount(for: capacity)) }
    }

    /// The number of keys.
    var count: Int { keys.count }

    /// The number of `key`, if the table has it.
    func number(of key: Key) -> Int? {
        guard !slots.isEmpty else { return nil }
        let hash = key.prehash
        var slot = Self.start(hash, mask)
        while true {
            let filed = Int(slots[slot])
            if filed == 0 { return nil }
            if hashes[filed - 1] == hash && keys[filed - 1] == key { return filed - 1 }
            slot = (slot + 1) & mask
        }
    }

    /// The number of `key`, adding it with the next number if the table does not have it yet.
    mutating func add(_ key: Key) -> Int {
        if keys.count * 2 >= slots.count { rehash(slotCount: Self.slotCount(for: keys.count + 1)) }
        let hash = key.prehash
        var slot = Self.start(hash, mask)
        while true {
            let filed = Int(slots[slot])
            if filed == 0 { break }
            if hashes[filed - 1] == hash && keys[filed - 1] == key { return filed - 1 }
            slot = (slot + 1) & mask
        }
        keys.append(key)
        hashes.append(hash)
        slots[slot] = Int32(truncatingIfNeeded: keys.count)
        return keys.count - 1
    }

    private mutating func rehash(slotCount: Int) {
        slots = [Int32](repeating: 0, count: slotCount)
        mask = slotCount - 1
        for (number, hash) in hashes.enumerated() {
            var slot = Self.start(hash, mask)
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(truncatingIfNeeded: number + 1)
        }
    }

    /// The smallest power of two at least twice `keys` (and at least 16).
    private static func slotCount(for keys: Int) -> Int {
        var count = 16
        while count < keys * 2 { count <<= 1 }
        return count
    }

    /// Where probing for `hash` starts: its high bits, which a multiplicative hash mixes best.
    @inline(__always)
    private static func start(_ hash: Int, _ mask: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: Int64(hash)) &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
    }
}

extension HashedString: PrehashedKey {}

/// Folds the hashes of a composite key's parts into one.
enum PrehashCombiner {
    /// `hash` folded into `combined` (start from ``seed``); order-sensitive.
    @inline(__always)
    static func combine(_ combined: Int, _ hash: Int) -> Int {
        var mixed = (UInt64(bitPattern: Int64(combined)) ^ UInt64(bitPattern: Int64(hash))) &* 0x9E37_79B9_7F4A_7C15
        mixed ^= mixed >> 29
        return Int(truncatingIfNeeded: mixed)
    }

    /// What combining starts from.
    static let seed = 0x243F_6A88_85A3_08D3
}
