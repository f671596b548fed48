import HashTreeCollections

/// A persistent map in two layers: a plain dictionary built in bulk, and a persistent hash trie
/// of the changes made since.
///
/// Opening a group files tens of thousands of entries at once: a flat table builds that faster
/// than inserting into a `TreeDictionary` one key at a time, and frees it faster (a trie node
/// destroys its key-value pairs one by one through generic value witnesses). Writes, which must not copy the whole map while a reader holds a snapshot, go to
/// the trie: a copy of the map is O(1), a change O(log n). When the changes outgrow half the
/// base they are folded into a new base, so a long-lived map stays mostly flat: O(n) now and
/// then, O(1) amortised per change.
///
/// The base is a ``KeyTable`` numbering its keys and an array of their values, so a bulk build
/// can hand over the table it gathered keys in (``Grouping``) without copying or hashing a key
/// again. It is never changed in place once another copy may share it, so every copy (every
/// index snapshot) keeps its contents.
struct LayeredMap<Key: PrehashedKey, Value> {
    /// The keys of the base, numbered.
    private var baseKeys: KeyTable<Key>
    /// The base's values, by key number.
    private var baseValues: [Value]
    /// Changes since the base was built.
    private var changes: ChangeLayer<Key, Value>

    /// An empty map.
    init() {
        self.init(keys: KeyTable(), values: [])
    }

    /// A map of `contents`, built in one go.
    init(_ contents: [Key: Value]) {
        var keys = KeyTable<Key>(capacity: contents.count)
        var values: [Value] = []
        values.reserveCapacity(contents.count)
        for (key, value) in contents {
            _ = keys.add(key)
            values.append(value)
        }
        self.init(keys: keys, values: values)
    }

    /// A map of every key of `keys` to the value of its number in `values` (one value per key).
    init(keys: KeyTable<Key>, values: [Value]) {
        precondition(keys.count == values.count, "a layered map needs one value per key")
        baseKeys = keys
        baseValues = values
        changes = ChangeLayer(baseCount: keys.count)
    }

    /// The number of keys.
    var count: Int { changes.count }

    /// Whether the map has no key.
    var isEmpty: Bool { count == 0 }

    /// The value of `key`; setting `nil` removes it.
    subscript(key: Key) -> Value? {
        get {
            if let changed = changes[key] { return changed }
            return baseValue(key)
        }
        set {
            if let newValue { updateValue(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    private func baseValue(_ key: Key) -> Value? {
        guard let number = baseKeys.number(of: key) else { return nil }
        return baseValues[number]
    }

    /// Sets the value of `key`; returns the value it replaced.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        defer { foldIfLarge() }
        let replaced = changes.set(value, forKey: key) ?? baseValue(key)
        return changes.counting(replaced, added: true)
    }

    /// Removes `key`; returns the value it had.
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        defer { foldIfLarge() }
        let original = baseValue(key)
        let removed = changes.remove(key, inBase: original != nil) ?? original
        return changes.counting(removed, added: false)
    }

    /// Changes the value of `key` (`nil`: none; leaving `nil` removes the key) in place: a value
    /// the changes hold is handed to `body` as the only reference to it, so that a value that is
    /// itself persistent (a tally's counts for one owner) changes without being copied first.
    mutating func modifyValue(forKey key: Key, _ body: (inout Value?) -> Void) {
        defer { foldIfLarge() }
        let original = baseValue(key)
        var value: Value?
        if let changed = changes.take(key) { value = changed } else { value = original }
        let existed = value != nil
        body(&value)
        if let value {
            _ = changes.set(value, forKey: key)
        } else if original != nil {
            _ = changes.remove(key, inBase: true)
        }
        changes.count(existed: existed, exists: value != nil)
    }

    private mutating func foldIfLarge() {
        guard changes.outgrows(base: baseKeys.count) else { return }
        var keys = KeyTable<Key>(capacity: count)
        var values: [Value] = []
        values.reserveCapacity(count)
        forEach { key, value in
            _ = keys.add(key)
            values.append(value)
        }
        self = LayeredMap(keys: keys, values: values)
    }

    /// Calls `body` with every key and value, in no particular order.
    func forEach(_ body: (Key, Value) throws -> Void) rethrows {
        if changes.isEmpty {
            for (key, value) in zip(baseKeys.keys, baseValues) { try body(key, value) }
            return
        }
        try changes.forEach { key, value in if let value { try body(key, value) } }
        for (key, value) in zip(baseKeys.keys, baseValues) where changes[key] == nil { try body(key, value) }
    }

    /// Every key, in no particular order.
    var keys: [Key] {
        if changes.isEmpty { return baseKeys.keys }
        var keys: [Key] = []
        keys.reserveCapacity(count)
        forEach { key, _ in keys.append(key) }
        return keys
    }

    /// Every value, in no particular order.
    var values: [Value] {
        var values: [Value] = []
        values.reserveCapacity(count)
        forEach { _, value in values.append(value) }
        return values
    }
}

extension LayeredMap: Sendable where Key: Sendable, Value: Sendable {}
