/// Numbers its keys 0, 1, 2… in the order they are added, and finds a key's number by the hash
/// the key carries (a ``NumberTable`` of the keys' numbers).
///
/// The base of every large map of the index (``LayeredMap``) and the gathering of a bulk build
/// (``Grouping``). A `Dictionary` runs SipHash over every key it hashes, even over a hash the key
/// already holds, for every entry in each of several maps when a group opens. Here a lookup mixes
/// the key's hash and compares it with the hashes stored beside the keys before comparing keys.
struct KeyTable<Key: PrehashedKey>: Sendable {
    /// The keys, by number.
    private(set) var keys: [Key] = []
    /// The keys' hashes, by number.
    private var hashes: [Int] = []
    /// The keys' numbers by hash.
    private var numbers = NumberTable()

    /// An empty table with room for `capacity` keys.
    init(capacity: Int = 0) {
        keys.reserveCapacity(capacity)
        hashes.reserveCapacity(capacity)
        if capacity > 0 { numbers = NumberTable(capacity: capacity) }
    }

    /// The number of keys.
    var count: Int { keys.count }

    /// The number of `key`, if the table has it.
    func number(of key: Key) -> Int? {
        number(of: key, hash: key.prehash)
    }

    /// The number of `key`, whose hash is `hash`, if the table has it.
    private func number(of key: Key, hash: Int) -> Int? {
        numbers.first(hash: hash) { hashes[$0] == hash && keys[$0] == key }
    }

    /// The number of `key`, adding it with the next number if the table does not have it yet.
    ///
    /// `key` is taken, not borrowed: most keys added are made for the table (a bulk build's
    /// converted keys, a tally's owners), and are moved into it rather than copied, which for a
    /// key of several strings is a reference count changed per string.
    mutating func add(_ key: consuming Key) -> Int {
        let hash = key.prehash
        if let known = number(of: key, hash: hash) { return known }
        if !numbers.hasRoom(for: keys.count + 1) { numbers = NumberTable(hashes: hashes, capacity: 2 * keys.count) }
        numbers.file(keys.count, hash: hash)
        keys.append(key)
        hashes.append(hash)
        return keys.count - 1
    }
}
