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
    /// Changes since: a value, or `nil` for a key removed from the base.
    private var changes: TreeDictionary<Key, Value?> = [:]
    /// The number of keys.
    private(set) var count: Int

    /// Folding waits for at least this many changes.
    private static var minimumChangesToFold: Int { 64 }

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
        count = keys.count
    }

    /// Whether the map has no key.
    var isEmpty: Bool { count == 0 }

    /// The value of `key`; setting `nil` removes it.
    subscript(key: Key) -> Value? {
        get {
            if !changes.isEmpty, let changed = changes[key] { return changed }
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
        let replaced: Value?
        if let changed = changes.updateValue(value, forKey: key) {
            replaced = changed
        } else {
            replaced = baseValue(key)
        }
        if replaced == nil { count += 1 }
        foldIfLarge()
        return replaced
    }

    /// Removes `key`; returns the value it had.
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        let removed: Value?
        if let original = baseValue(key) {
            // Shadow the base's value; what the key held last is the change, if there was one.
            if let changed = changes.updateValue(nil, forKey: key) { removed = changed } else { removed = original }
        } else {
            removed = changes.removeValue(forKey: key) ?? nil
        }
        if removed != nil { count -= 1 }
        foldIfLarge()
        return removed
    }

    private mutating func foldIfLarge() {
        guard changes.count >= Self.minimumChangesToFold, changes.count > baseKeys.count / 2 else { return }
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
        for (key, value) in changes { if let value { try body(key, value) } }
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
