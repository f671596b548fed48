/// Up to six interned slots, as one key: what a decoding thread groups entries by before any
/// index key (a ``HashedString``, a bucket) is made (see ``SlotFiling``). Hashing and comparing
/// it touches no string and no reference count.
struct SlotKey: PrehashedKey {
    /// The slots; -1 past the key's parts.
    private var slots = InlineArray<6, Int32>(repeating: -1)

    /// The key of `count` slots (at most six), slot number `n` being `slot(n)`.
    init(count: Int, slot: (Int) -> Int32) {
        for number in 0..<count { slots[number] = slot(number) }
    }

    /// Slot number `number`.
    subscript(number: Int) -> Int32 { slots[number] }

    /// The slots, two to a word, mixed.
    var prehash: Int {
        var hash = HashMixer.seed
        for pair in stride(from: 0, to: 6, by: 2) {
            let word = UInt64(UInt32(bitPattern: slots[pair])) | UInt64(UInt32(bitPattern: slots[pair + 1])) << 32
            hash = HashMixer.combine(hash, Int(truncatingIfNeeded: word))
        }
        return hash
    }

    /// Whether every slot is the same.
    static func == (lhs: SlotKey, rhs: SlotKey) -> Bool {
        for number in 0..<6 where lhs.slots[number] != rhs.slots[number] { return false }
        return true
    }

    /// Feeds ``prehash`` to `hasher`.
    func hash(into hasher: inout Hasher) { hasher.combine(prehash) }
}
