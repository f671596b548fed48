/// An open-addressing hash table of the numbers 0, 1, 2… of items its owner keeps elsewhere (the
/// keys of a ``KeyTable``, the rows of an ``EntryMap``'s base, the texts of a
/// ``StringInterner``): it finds an item's number from the item's hash, probing linearly from
/// where ``HashMixer`` puts the hash, and asks the owner whether a number is the item sought.
///
/// It holds only 32-bit numbers, at most half its slots full, so a lookup touches one short run
/// of one array and compares items only where the owner's stored hashes match. It is the index's
/// one hash table: the owners differ only in what an item is.
struct NumberTable: Sendable {
    /// Numbers plus one (0: empty); a power of two in size.
    private var slots: [UInt32] = []
    /// The slot count less one: what keeps a mixed hash within the slots.
    private var mask = 0

    /// A table with no number and no room.
    init() {}

    /// An empty table with room for `capacity` numbers.
    init(capacity: Int) {
        precondition(capacity < Int(UInt32.max), "too many items for a number table")
        var size = 16
        while size < 2 * capacity { size <<= 1 }
        slots = [UInt32](repeating: 0, count: size)
        mask = size - 1
    }

    /// A table of the numbers `0..<hashes.count`, each filed under its hash, with room for
    /// `capacity` numbers in all.
    init(hashes: [Int], capacity: Int) {
        self.init(capacity: max(capacity, hashes.count))
        for (number, hash) in hashes.enumerated() { file(number, hash: hash) }
    }

    /// Whether `count` numbers fit without the table growing past half full.
    func hasRoom(for count: Int) -> Bool { 2 * count <= slots.count }

    /// The first number filed under `hash` that `matches` accepts, if any.
    @inline(__always)
    func first(hash: Int, where matches: (Int) -> Bool) -> Int? {
        guard !slots.isEmpty else { return nil }
        var slot = HashMixer.slot(hash, mask: mask)
        while true {
            let filed = slots[slot]
            if filed == 0 { return nil }
            if matches(Int(filed - 1)) { return Int(filed - 1) }
            slot = (slot + 1) & mask
        }
    }

    /// Files `number` under `hash`; the table must have room for it (``hasRoom(for:)``).
    mutating func file(_ number: Int, hash: Int) {
        var slot = HashMixer.slot(hash, mask: mask)
        while slots[slot] != 0 { slot = (slot + 1) & mask }
        slots[slot] = UInt32(truncatingIfNeeded: number + 1)
    }
}
