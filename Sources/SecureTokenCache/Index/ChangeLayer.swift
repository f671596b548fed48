import HashTreeCollections

/// The changes a persistent map (``LayeredMap``, ``EntryMap``) has had since its flat base was
/// built, in a persistent hash trie, and how many keys the map holds with them.
///
/// A key's change is a value, or `nil` for a key removed from the base; a key with no change has
/// what the base has. Copying the layer is O(1) and a change O(log n), so a reader's snapshot
/// keeps its contents while a writer changes its copy; once the changes outgrow half the base
/// (``outgrows(base:)``), the map folds them into a new base.
struct ChangeLayer<Key: Hashable, Value> {
    /// The changes.
    private var changes: TreeDictionary<Key, Value?> = [:]
    /// How many keys the map holds, base and changes together.
    private(set) var count: Int

    /// No changes to a base of `baseCount` keys.
    init(baseCount: Int) { count = baseCount }

    /// Whether there is no change.
    var isEmpty: Bool { changes.isEmpty }

    /// The change of `key`: `nil` for none, `.some(nil)` for a removal.
    subscript(key: Key) -> Value?? { changes.isEmpty ? nil : changes[key] }

    /// Sets `key`'s value; returns the key's previous change (`nil`: it had none, and the map had
    /// what its base has). Count the change with ``counting(_:added:)``.
    mutating func set(_ value: Value, forKey key: Key) -> Value?? {
        changes.updateValue(value, forKey: key)
    }

    /// Removes `key`, shadowing the base's value when `inBase`; returns the key's previous change
    /// (`nil`: it had none, and the map had what its base has). Count the change with
    /// ``counting(_:added:)``.
    mutating func remove(_ key: Key, inBase: Bool) -> Value?? {
        inBase ? changes.updateValue(nil, forKey: key) : changes.removeValue(forKey: key)
    }

    /// Takes `key`'s change out of the layer, so that the caller holds the only reference to a
    /// changed value; returns it (`nil`: it had none). The caller puts the key back with
    /// ``set(_:forKey:)`` or ``remove(_:inBase:)``; the count is the same as before.
    mutating func take(_ key: Key) -> Value?? {
        changes.isEmpty ? nil : changes.removeValue(forKey: key)
    }

    /// `previous`, the value the map had for a key just set (`added`) or removed, after counting
    /// the key in or out.
    mutating func counting(_ previous: Value?, added: Bool) -> Value? {
        if added, previous == nil { count += 1 }
        if !added, previous != nil { count -= 1 }
        return previous
    }

    /// Counts a key that `existed` before a change and `exists` after it in or out.
    mutating func count(existed: Bool, exists: Bool) {
        if exists, !existed { count += 1 }
        if existed, !exists { count -= 1 }
    }

    /// Whether the changes are many enough, against a base of `base` keys, to fold into a new
    /// base: O(n) now and then, O(1) amortised per change, and a long-lived map stays mostly flat.
    func outgrows(base: Int) -> Bool { changes.count >= 64 && changes.count > base / 2 }

    /// Calls `body` with every changed key and its value (`nil`: removed), in no particular order.
    func forEach(_ body: (Key, Value?) throws -> Void) rethrows {
        for (key, value) in changes { try body(key, value) }
    }
}

extension ChangeLayer: Sendable where Key: Sendable, Value: Sendable {}
