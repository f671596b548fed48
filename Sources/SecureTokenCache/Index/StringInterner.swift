import Glibc

/// One `String` per distinct text, for decoding many records whose members repeat (every entry of
/// a user names the same account, cloud, client and tenant): a repeat costs a hash and a
/// comparison instead of an allocation, and the group holds one copy of each.
///
/// Also remembers the ``HomeAccountId``, ``Environment`` and ``Scopes`` parsed from an interned
/// string, so each distinct value is parsed once.
///
/// A ``NumberTable`` of slots by the ``StringHash`` of their bytes. The texts are kept back to
/// back in one byte array, so finding one compares bytes without touching (and retaining) a
/// `String`; the `String` of a slot is made when first asked for.
struct StringInterner {
    /// What an interned string was parsed into, if anything.
    private enum Parsed {
        case none
        case homeAccountId(HomeAccountId?)
        case environment(Environment)
        case scopes(Scopes)
        case lowercasedKey(HashedString)
        case exactKey(HashedString)
    }

    /// By slot: the hash, where the text is in `texts` (slot `i`: `starts[i]..<starts[i + 1]`),
    /// its `String` once made, and what was parsed from it.
    private var hashes: [Int] = []
    private var texts: [UInt8] = []
    private var starts: [Int] = [0]
    private var strings: [String?] = []
    private var parsed: [Parsed] = []
    /// The slots by the hashes of their texts.
    private var table = NumberTable()

    /// Whether parsed values get objects of their own rather than the process-wide ones (see
    /// ``Environment/init(unshared:)``): for a thread decoding alongside others.
    private let ownObjects: Bool

    /// An empty interner; `ownObjects` for one of several threads decoding at once.
    init(ownObjects: Bool = false) {
        self.ownObjects = ownObjects
    }

    /// The number of strings interned.
    var count: Int { hashes.count }

    /// The slot of the string with exactly these UTF-8 bytes, interning it if new.
    mutating func slot(of bytes: UnsafeRawBufferPointer) -> Int {
        let hash = StringHash.hash(bytes)
        if let known = table.first(hash: hash, where: { hashes[$0] == hash && holds($0, bytes) }) { return known }
        if !table.hasRoom(for: hashes.count + 1) { grow() }
        table.file(hashes.count, hash: hash)
        hashes.append(hash)
        texts.append(contentsOf: bytes)
        starts.append(texts.count)
        strings.append(nil)
        parsed.append(.none)
        return hashes.count - 1
    }

    /// ``slot(of:)``, trying `hint` (the slot the same member of the previous entry had) first:
    /// most entries repeat their predecessor's cloud, client and tenant, and comparing with one
    /// text costs less than hashing and probing. Updates `hint`.
    mutating func slot(of bytes: UnsafeRawBufferPointer, hint: inout Int) -> Int {
        if hint >= 0, holds(hint, bytes) { return hint }
        hint = slot(of: bytes)
        return hint
    }

    /// Whether `slot` holds exactly these bytes.
    private func holds(_ slot: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let start = starts[slot]
        guard starts[slot + 1] - start == bytes.count else { return false }
        return bytes.isEmpty || texts.withUnsafeBytes { memcmp($0.baseAddress! + start, bytes.baseAddress!, bytes.count) == 0 }
    }

    /// The string in `slot`, made the first time it is asked for.
    mutating func string(at slot: Int) -> String {
        if let made = strings[slot] { return made }
        let made = texts.withUnsafeBufferPointer {
            String(decoding: UnsafeBufferPointer(rebasing: $0[starts[slot]..<starts[slot + 1]]), as: UTF8.self)
        }
        strings[slot] = made
        return made
    }

    /// Whether the string in `slot` is empty.
    func isEmpty(at slot: Int) -> Bool { starts[slot + 1] == starts[slot] }

    /// The credential home account id of the string in `slot` (`nil` when empty), parsed once.
    mutating func homeAccountId(at slot: Int) -> HomeAccountId? {
        if case .homeAccountId(let made) = parsed[slot] { return made }
        let made = isEmpty(at: slot) ? nil : HomeAccountId(string(at: slot))
        parsed[slot] = .homeAccountId(made)
        return made
    }

    /// The environment of the string in `slot`, parsed once.
    mutating func environment(at slot: Int) -> Environment {
        if case .environment(let made) = parsed[slot] { return made }
        let text = string(at: slot)
        let made = ownObjects ? Environment(unshared: text) : Environment(text)
        parsed[slot] = .environment(made)
        return made
    }

    /// The scopes of the `target` string in `slot`, parsed once.
    mutating func scopes(at slot: Int) -> Scopes {
        if case .scopes(let made) = parsed[slot] { return made }
        let made = Scopes(target: string(at: slot))
        parsed[slot] = .scopes(made)
        return made
    }

    /// The string in `slot` with its hash, made once.
    mutating func exactKey(at slot: Int) -> HashedString {
        if case .exactKey(let key) = parsed[slot] { return key }
        let key = HashedString(string(at: slot))
        parsed[slot] = .exactKey(key)
        return key
    }

    /// The string in `slot`, lower-cased, with its hash, made once.
    mutating func lowercasedKey(at slot: Int) -> HashedString {
        if case .lowercasedKey(let key) = parsed[slot] { return key }
        let key = HashedString(string(at: slot).asciiLowercased)
        parsed[slot] = .lowercasedKey(key)
        return key
    }

    private mutating func grow() {
        if hashes.isEmpty {
            // Room for what one small update interns (a catch-up, a few records) without growing.
            hashes.reserveCapacity(32)
            starts.reserveCapacity(33)
            strings.reserveCapacity(32)
            parsed.reserveCapacity(32)
        }
        table = NumberTable(hashes: hashes, capacity: max(128, 2 * hashes.count))
    }
}
