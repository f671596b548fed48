import Glibc

/// The text of an entry's key (``EntryID``) or of a record's name (``RecordID``): a string, or,
/// for an MSAL entry filed under the very key MSAL derives from its members, the entry's payload.
///
/// MSAL files an entry under its home account, cloud, kind, client, tenant and target, joined and
/// lower-cased, and the entry's payload holds each of those members. A key held as a string of its
/// own would keep that text twice, a hundred to two hundred bytes per entry of a large group; a
/// key held as its payload keeps it once and makes the text only when something reads it (an
/// export, a write of the entry, a seal). It is held so only where it was checked to give exactly
/// the key the entry came under (``init(kind:payload:matching:)``); any other key (another SDK's
/// shape, an on-behalf-of token's) stays a string.
///
/// Both forms of one text are equal and hash alike (``stringHash``), byte for byte.
struct KeyText: Sendable {
    private enum Storage: Sendable {
        case string(String)
        /// The key ``KeyText/withDerivedKey(_:_:_:)`` makes from the payload's members.
        case derived(PayloadBytes, CredentialKind)
    }

    private let storage: Storage

    /// `string`, held as it is.
    init(_ string: String) {
        storage = .string(string)
    }

    /// The key `kind`'s rule makes from `payload`, which was checked to give one
    /// (``derives(_:payload:key:)``) when the payload was written.
    init(derivedFrom payload: PayloadBytes, kind: CredentialKind) {
        storage = .derived(payload, kind)
    }

    /// Whether the key `kind`'s rule makes from `payload`'s members is exactly `key`'s bytes.
    static func derives(_ kind: CredentialKind, payload: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) -> Bool {
        withDerivedKey(kind, payload) { derived in
            derived.count == key.count && (key.isEmpty || memcmp(derived.baseAddress!, key.baseAddress!, key.count) == 0)
        } ?? false
    }

    /// The key `kind`'s rule makes from `payload`'s members (``withDerivedKey(_:_:_:)``), or `nil`
    /// when it makes none.
    static func derivedString(_ kind: CredentialKind, payload: ArraySlice<UInt8>) -> String? {
        payload.withUnsafeBytes { payload in withDerivedKey(kind, payload) { String(decoding: $0, as: UTF8.self) } }
    }

    /// The text.
    var string: String {
        switch storage {
        case .string(let string):
            return string
        case .derived:
            return withUTF8 { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// Whether the text is held as a payload.
    var isDerived: Bool {
        if case .derived = storage { return true }
        return false
    }

    /// `body` with the text's UTF-8 bytes (made in temporary memory for a derived key).
    func withUTF8<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        switch storage {
        case .string(let string):
            if let result = try string.utf8.withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) {
                return result
            }
            return try Array(string.utf8).withUnsafeBytes(body)
        case .derived(let payload, let kind):
            let result = try payload.withUnsafeBytes { payload in try Self.withDerivedKey(kind, payload, body) }
            guard let result else { preconditionFailure("a payload that gave its key no longer gives one") }
            return result
        }
    }

    /// The number of bytes of the text's UTF-8 (for a derived key, counted without making it).
    var utf8Count: Int {
        switch storage {
        case .string(let string):
            return string.utf8.count
        case .derived(let payload, let kind):
            let count = payload.withUnsafeBytes { payload in
                Self.derivedKeyParts(kind, payload).map { parts, count in
                    (0..<count).reduce(count - 1) { $0 + parts[$1].count }
                }
            }
            guard let count else { preconditionFailure("a payload that gave its key no longer gives one") }
            return count
        }
    }

    /// The text's ``StringHash``, as `StringHash.hash(string)` gives it.
    var stringHash: Int {
        if case .string(let string) = storage { return StringHash.hash(string) }
        return withUTF8 { StringHash.hash($0) }
    }

    /// Whether the texts are equal, byte for byte.
    static func == (lhs: KeyText, rhs: KeyText) -> Bool {
        switch (lhs.storage, rhs.storage) {
        case (.derived(let left, let leftKind), .derived(let right, let rightKind))
        where leftKind == rightKind && (left.isSamePlace(as: right) || sameKeyMembers(left, right)):
            return true
        default:
            // Two strings too: not `String`'s `==`, which is canonical equivalence; texts it calls
            // equal but whose bytes differ hash apart, and an id's equality must agree with its hash.
            return lhs.withUTF8 { left in
                rhs.withUTF8 { right in
                    left.count == right.count && (left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
                }
            }
        }
    }

    /// Whether the payloads hold the same text, byte for byte, in every member a key is made of:
    /// then the keys one kind's rule makes of them are equal. Keys are compared after their hashes
    /// matched, so they are nearly always equal, and this answers without making either key; when
    /// a member differs (in case only, say) the keys may still be equal, and the caller compares
    /// them made.
    private static func sameKeyMembers(_ left: PayloadBytes, _ right: PayloadBytes) -> Bool {
        left.withUnsafeBytes { left in
            right.withUnsafeBytes { right in
                guard let leftMembers = keyMembers(of: left), let rightMembers = keyMembers(of: right) else { return false }
                for member in 0..<5 {
                    let (mine, theirs) = (leftMembers[member], rightMembers[member])
                    guard mine.count == theirs.count else { return false }
                    if !mine.isEmpty, memcmp(mine.baseAddress!, theirs.baseAddress!, mine.count) != 0 { return false }
                }
                return true
            }
        }
    }

    /// `body` with the key MSAL gives an entry of `kind` whose payload is `payload`: its home account
    /// id, environment, credential type, client id, tenant and target (an account's: home account
    /// id, environment and tenant), joined by `-` and lower-cased. `nil` for app metadata (whose key
    /// keeps its case), and for a payload with one of those members but not as text.
    private static func withDerivedKey<Result>(
        _ kind: CredentialKind, _ payload: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Result
    ) rethrows -> Result? {
        guard let (parts, count) = derivedKeyParts(kind, payload) else { return nil }
        var length = count - 1
        for index in 0..<count { length += parts[index].count }
        return try withUnsafeTemporaryAllocation(byteCount: length, alignment: 8) { buffer in
            let start = buffer.baseAddress!
            var position = 0
            for index in 0..<count {
                if index > 0 {
                    start.storeBytes(of: UInt8(ascii: "-"), toByteOffset: position, as: UInt8.self)
                    position += 1
                }
                let part = parts[index]
                if let source = part.baseAddress { (start + position).copyMemory(from: source, byteCount: part.count) }
                position += part.count
            }
            lowercaseASCII(buffer)
            return try body(UnsafeRawBufferPointer(buffer))
        }
    }

    /// The parts of the key MSAL gives an entry of `kind` whose payload is `payload`, in order, and
    /// how many there are (``withDerivedKey(_:_:_:)``, before they are joined and lower-cased).
    private static func derivedKeyParts(
        _ kind: CredentialKind, _ payload: UnsafeRawBufferPointer
    ) -> (parts: InlineArray<6, UnsafeRawBufferPointer>, count: Int)? {
        guard kind != .appMetadata, let members = keyMembers(of: payload) else { return nil }
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        var parts = InlineArray<6, UnsafeRawBufferPointer>(repeating: empty)
        var count = 0
        func add(_ part: UnsafeRawBufferPointer) {
            parts[count] = part
            count += 1
        }
        func add(_ literal: StaticString) {
            add(UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
        }
        add(members[KeyMember.home.rawValue])
        add(members[KeyMember.environment.rawValue])
        switch kind {
        case .accessToken:
            add("accesstoken")
            add(members[KeyMember.client.rawValue])
            add(members[KeyMember.realm.rawValue])
            add(members[KeyMember.target.rawValue])
        case .refreshToken:
            add("refreshtoken")
            add(members[KeyMember.client.rawValue])
            add(empty)
            add(members[KeyMember.target.rawValue])
        case .idToken:
            add("idtoken")
            add(members[KeyMember.client.rawValue])
            add(members[KeyMember.realm.rawValue])
            add(empty)
        case .account:
            add(members[KeyMember.realm.rawValue])
        case .appMetadata:
            return nil
        }
        return (parts, count)
    }

    /// Lower-cases the ASCII letters of `bytes` in place, eight at a time: a key is made each time
    /// one is read, compared or hashed.
    private static func lowercaseASCII(_ bytes: UnsafeMutableRawBufferPointer) {
        let ones: UInt64 = 0x0101_0101_0101_0101
        var offset = 0
        while bytes.count - offset >= 8 {
            let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            let low = word & (0x7F &* ones)
            // The high bit of each byte: at least `A`, more than `Z`, and not part of a longer character.
            let atLeastA = low &+ (0x80 - 0x41) &* ones
            let pastZ = low &+ (0x80 - 0x5B) &* ones
            let upper = atLeastA & ~pastZ & ~word & (0x80 &* ones)
            bytes.storeBytes(of: word | upper >> 2, toByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte &- UInt8(ascii: "A") < 26 { bytes[offset] = byte | 0x20 }
            offset += 1
        }
    }

    /// The members a key is made of, by ``KeyMember``.
    private enum KeyMember: Int {
        case home, environment, client, realm, target
    }

    /// The texts of the members a key is made of (empty where absent), or `nil` when one of them is
    /// not a string or the payload does not decode.
    private static func keyMembers(of payload: UnsafeRawBufferPointer) -> InlineArray<5, UnsafeRawBufferPointer>? {
        var members = InlineArray<5, UnsafeRawBufferPointer>(repeating: UnsafeRawBufferPointer(start: nil, count: 0))
        var reader = PayloadReader(payload)
        do {
            let (_, count) = try reader.header()
            var found = 0
            for _ in 0..<count where found < 5 {
                let code = try reader.byte()
                if code == 0 { _ = try reader.text() }
                let member: KeyMember? =
                    switch code {
                    case KnownField.homeAccountId.rawValue: .home
                    case KnownField.environment.rawValue: .environment
                    case KnownField.clientId.rawValue: .client
                    case KnownField.realm.rawValue: .realm
                    case KnownField.target.rawValue: .target
                    default: nil
                    }
                guard let member else {
                    try reader.skipValue()
                    continue
                }
                guard try reader.byte() == EntryPayload.ValueType.string.rawValue else { return nil }
                members[member.rawValue] = try reader.text()
                found += 1
            }
        } catch {
            return nil
        }
        return members
    }
}

extension PayloadBytes {
    /// Whether `other` is the same run of the same array.
    func isSamePlace(as other: PayloadBytes) -> Bool {
        withUnsafeBytes { mine in
            other.withUnsafeBytes { theirs in mine.baseAddress == theirs.baseAddress && mine.count == theirs.count }
        }
    }
}
