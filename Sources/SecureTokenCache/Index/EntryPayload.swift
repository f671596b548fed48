import Glibc

/// The plaintext of an MSAL entry's record: the entry's members in a binary form that
/// decodes without parsing JSON.
///
/// `2 ‖ ordinal u64le ‖ member count (varint) ‖ member…`, where a member is
/// `code u8 ‖ [name length (varint) ‖ name, when code is 0] ‖ type u8 ‖ value`. A non-zero code
/// is a ``KnownField``; the type is one of ``ValueType``, and strings, number literals and
/// nested JSON carry `length (varint) ‖ UTF-8 bytes`. Members keep their order, number literals
/// their spelling, and unknown members and nested values survive as they came, so an entry
/// decodes to exactly the ``JSONObject`` it was encoded from.
enum EntryPayload {
    /// The version byte of this format.
    static let version: UInt8 = 2

    /// How a member's value is stored.
    enum ValueType: UInt8 {
        case string = 0
        case number = 1
        case `true` = 2
        case `false` = 3
        case null = 4
        /// An array or object, as compact JSON.
        case json = 5
    }

    /// The payload of `stored`: the one it was read from, with its ordinal changed if need be.
    static func encode(_ stored: StoredEntry) -> ArraySlice<UInt8> {
        if case .payload(let payload) = stored.entry.members, ordinal(of: payload) != nil {
            return self.payload(payload, ordinal: stored.ordinal)
        }
        let members = stored.entry.fields.members
        return encode(ordinal: stored.ordinal, members: members, codes: members.map { KnownField(name: $0.key)?.rawValue ?? 0 })[
            ...]
    }

    /// The payload of `members` under `ordinal`, whose ``KnownField`` codes are `codes` (0: a
    /// member stored by name).
    static func encode(ordinal: UInt64, members: [(key: String, value: JSONValue)], codes: [UInt8]) -> [UInt8] {
        // Arrays and objects are stored as compact JSON, written first so that the payload's
        // size is known and its bytes are allocated once.
        var nested: [[UInt8]] = []
        var size = 9 + varintSize(UInt64(members.count))
        for (member, code) in zip(members, codes) {
            size += 2
            if code == 0 { size += textSize(member.key.utf8.count) }
            switch member.value {
            case .string(let text), .number(let text): size += textSize(text.utf8.count)
            case .bool, .null: break
            case .array, .object:
                var json: [UInt8] = []
                JSONWriter.write(member.value, style: .compact, into: &json)
                size += textSize(json.count)
                nested.append(json)
            }
        }
        var writer = PayloadWriter(capacity: size)
        writer.header(ordinal: ordinal, memberCount: members.count)
        var nextNested = 0
        for (member, code) in zip(members, codes) {
            writer.byte(code)
            if code == 0 { writer.text(member.key) }
            switch member.value {
            case .string(let text):
                writer.byte(ValueType.string.rawValue)
                writer.text(text)
            case .number(let literal):
                writer.byte(ValueType.number.rawValue)
                writer.text(literal)
            case .bool(let flag):
                writer.byte(flag ? ValueType.true.rawValue : ValueType.false.rawValue)
            case .null:
                writer.byte(ValueType.null.rawValue)
            case .array, .object:
                writer.byte(ValueType.json.rawValue)
                nested[nextNested].withUnsafeBytes { writer.text($0) }
                nextNested += 1
            }
        }
        return writer.bytes
    }

    /// Reads the JSON object next in `parser` (an MSAL entry) straight into the payload that
    /// ``encode(ordinal:members:codes:)`` makes of the object a whole parse of it gives, appended
    /// to `output`, with the same checks and errors as that parse. `members` is room for the
    /// members while they are counted. `order` holds the codes of the members of the entry read
    /// before (0: unknown), the names expected in this one, and is left holding this one's.
    ///
    /// - Returns: `false`, with nothing appended, when the object has a member twice (a whole
    ///   parse keeps its first position and last value); `parser` is past the object either way.
    static func read(
        _ parser: inout JSONParser, ordinal: UInt64, members: inout PayloadWriter, order: inout [UInt8],
        into output: inout PayloadWriter
    ) throws -> Bool {
        members.removeAll()
        var count = 0
        var known: UInt32 = 0
        var unknown: [String] = []
        var repeated = false
        let expectedNames = Self.expectedNames
        if try parser.beginObject() {
            repeat {
                let expected = count < order.count ? order[count] : 0
                let code: UInt8
                if expected != 0, parser.skipMemberName(expectedNames[Int(expected)]) {
                    code = expected
                } else {
                    let name = try parser.memberName()
                    code = name.withUTF8 { KnownField(utf8Name: UnsafeRawBufferPointer($0)) }?.rawValue ?? 0
                    if code == 0 {
                        let text = name.string
                        repeated = repeated || unknown.contains(text)
                        unknown.append(text)
                        members.byte(0)
                        members.text(text)
                    }
                }
                if code != 0 {
                    repeated = repeated || known & 1 << UInt32(code) != 0
                    known |= 1 << UInt32(code)
                    members.byte(code)
                }
                if count < order.count { order[count] = code } else { order.append(code) }
                // At the end of the data (0), the whole parse's error comes from parseValue().
                switch parser.peek() ?? 0 {
                case UInt8(ascii: "\""):
                    members.byte(ValueType.string.rawValue)
                    try parser.parseStringValue().withUTF8 { members.text(UnsafeRawBufferPointer($0)) }
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    members.byte(ValueType.number.rawValue)
                    members.text(UnsafeRawBufferPointer(try parser.numberLiteral()))
                case UInt8(ascii: "t"):
                    try parser.expectLiteral("true")
                    members.byte(ValueType.true.rawValue)
                case UInt8(ascii: "f"):
                    try parser.expectLiteral("false")
                    members.byte(ValueType.false.rawValue)
                case UInt8(ascii: "n"):
                    try parser.expectLiteral("null")
                    members.byte(ValueType.null.rawValue)
                default:
                    // An array or an object (anything else is refused here as everywhere).
                    var json: [UInt8] = []
                    JSONWriter.write(try parser.parseValue(), style: .compact, into: &json)
                    members.byte(ValueType.json.rawValue)
                    json.withUnsafeBytes { members.text($0) }
                }
                count += 1
            } while try parser.endOfMember()
        }
        if order.count > count { order.removeLast(order.count - count) }
        guard !repeated else { return false }
        output.header(ordinal: ordinal, memberCount: count)
        output.raw(members)
        return true
    }

    /// Each known field's name as ``read(_:ordinal:members:order:into:)`` expects it, by code.
    private static let expectedNames: [JSONParser.ExpectedName] = (0...KnownField.largestCode).map { code in
        KnownField.byCode[code].map { JSONParser.ExpectedName($0.name) } ?? .never
    }

    /// Whether two payloads hold the same members, whatever their ordinals.
    static func sameMembers(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Bool {
        guard a.count == b.count, a.count >= 9, a.first == b.first else { return false }
        return a.withUnsafeBytes { a in
            b.withUnsafeBytes { b in memcmp(a.baseAddress! + 9, b.baseAddress! + 9, a.count - 9) == 0 }
        }
    }

    /// Whether every member of a payload that ``EntryDecoder`` read before is a known one whose
    /// code is in `fields` (one bit per code).
    static func holdsOnly(_ fields: UInt32, _ payload: ArraySlice<UInt8>) -> Bool {
        reading(payload) { reader, count in
            for _ in 0..<count {
                let code = try reader.byte()
                guard code != 0, code < 32, fields & 1 << UInt32(code) != 0 else { return false }
                try reader.skipValue()
            }
            return true
        }
    }

    /// Writes the members of a payload that ``EntryDecoder`` read before as the JSON object
    /// ``members(of:)`` would make of them, in `style` at nesting `level` (``JSONWriter``), leaving
    /// out the member `omitted` when it is given.
    static func writeObject(
        _ payload: ArraySlice<UInt8>, style: JSONWriter.Style, level: Int, omitting omitted: KnownField?,
        into output: inout [UInt8]
    ) {
        reading(payload) { reader, count in
            var written = count
            if let omitted {
                var scan = reader
                for _ in 0..<count {
                    let code = try scan.byte()
                    if code == 0 { _ = try scan.text() }
                    if code == omitted.rawValue { written -= 1 }
                    try scan.skipValue()
                }
            }
            var failure: (any Error)?
            JSONWriter.writeContainer(count: Int(written), brackets: ("{", "}"), style: style, level: level, into: &output) {
                output in
                do {
                    while true {
                        let code = try reader.byte()
                        if code == 0 {
                            JSONWriter.writeName(utf8: try reader.text(), style: style, into: &output)
                        } else if code == omitted?.rawValue {
                            try reader.skipValue()
                            continue
                        } else {
                            var name = KnownField.byCode[Int(code)]!.name
                            name.withUTF8 {
                                JSONWriter.writeName(utf8: UnsafeRawBufferPointer($0), plain: true, style: style, into: &output)
                            }
                        }
                        try reader.writeValue(style: style, level: level + 1, into: &output)
                        return
                    }
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
        }
    }

    /// How many bytes `value` takes as a varint.
    static func varintSize(_ value: UInt64) -> Int { max(1, (64 - value.leadingZeroBitCount + 6) / 7) }

    /// How many bytes a length-prefixed run of `count` bytes takes.
    static func textSize(_ count: Int) -> Int { varintSize(UInt64(count)) + count }

    /// `payload` (of this version) with `ordinal` in its header: the members encode as they did,
    /// so only the header changes.
    static func payload(_ payload: ArraySlice<UInt8>, ordinal: UInt64) -> ArraySlice<UInt8> {
        if self.ordinal(of: payload) == ordinal { return payload }
        var copy = Array(payload)
        copy.withUnsafeMutableBytes { setOrdinal(ordinal, in: $0) }
        return copy[...]
    }

    /// Writes `ordinal` into the header of the payload (of this version) that `payload` holds.
    static func setOrdinal(_ ordinal: UInt64, in payload: UnsafeMutableRawBufferPointer) {
        payload.storeBytes(of: ordinal.littleEndian, toByteOffset: 1, as: UInt64.self)
    }

    /// The ordinal a payload carries.
    static func ordinal(of payload: ArraySlice<UInt8>) -> UInt64? {
        payload.withUnsafeBytes(ordinal(in:))
    }

    /// ``ordinal(of:)`` of a payload's bytes.
    static func ordinal(in payload: UnsafeRawBufferPointer) -> UInt64? {
        guard payload.count >= 9, payload[0] == version else { return nil }
        return UInt64(littleEndian: payload.loadUnaligned(fromByteOffset: 1, as: UInt64.self))
    }

    /// Every member of a payload that ``EntryDecoder`` read before, in order.
    static func members(of payload: ArraySlice<UInt8>) -> JSONObject {
        reading(payload) { reader, count in
            var members: [(key: String, value: JSONValue)] = []
            members.reserveCapacity(Int(min(count, 64)))
            for _ in 0..<count {
                let code = try reader.byte()
                let key = code == 0 ? String(decoding: try reader.text(), as: UTF8.self) : KnownField.byCode[Int(code)]!.name
                members.append((key: key, value: try reader.value { String(decoding: $0, as: UTF8.self) }))
            }
            return JSONObject(members)
        }
    }

    /// `body` with a reader past the header of a payload that ``EntryDecoder`` read before, and
    /// its member count: the same bytes decoded when the entry was read, so they cannot fail now.
    private static func reading<Result>(
        _ payload: ArraySlice<UInt8>, _ body: (inout PayloadReader, UInt64) throws -> Result
    ) -> Result {
        do {
            return try payload.withUnsafeBytes { bytes in
                var reader = PayloadReader(bytes)
                let (_, count) = try reader.header()
                return try body(&reader, count)
            }
        } catch {
            preconditionFailure("an entry payload that decoded before no longer decodes")
        }
    }

    /// The text of the known member `field` of a payload that ``EntryDecoder`` read before (a
    /// string, or a number's literal), if it has one.
    static func string(_ field: KnownField, of payload: ArraySlice<UInt8>) -> String? {
        member(field, of: payload) { try $0.textValue().map { String(decoding: $0, as: UTF8.self) } }
    }

    /// The known member `field` of a payload that ``EntryDecoder`` read before, if it has one.
    static func value(_ field: KnownField, of payload: ArraySlice<UInt8>) -> JSONValue? {
        member(field, of: payload) { try $0.value { String(decoding: $0, as: UTF8.self) } }
    }

    /// `read` with a reader at the value of the known member `field`, if the payload has one.
    private static func member<Value>(
        _ field: KnownField, of payload: ArraySlice<UInt8>, _ read: (inout PayloadReader) throws -> Value?
    ) -> Value? {
        reading(payload) { reader, count in
            for _ in 0..<count {
                let code = try reader.byte()
                if code == 0 { _ = try reader.text() }
                guard code == field.rawValue else {
                    try reader.skipValue()
                    continue
                }
                return try read(&reader)
            }
            return nil
        }
    }
}

/// Decodes entry payloads into typed entries, or only into the keys the index files
/// them under, sharing work across the entries of one load: the members many entries repeat
/// (account, cloud, client, tenant, scopes, token type) are interned, one `String` per distinct
/// text, and the ``HomeAccountId``, ``Environment``, ``Scopes`` and index keys made from them
/// are made once.
///
/// Only the members the engine reads are decoded; the entry keeps the payload for the rest
/// (``EntryMembers``). Not thread-safe: use one per thread.
struct EntryDecoder {
    private var interner: StringInterner
    /// Whether members are interned (decoding many entries) or made afresh (one entry).
    private let sharing: Bool
    private var parts = EntryParts()
    /// By member code: the slot that member's string had in the previous entry (-1: none).
    private var hints = InlineArray<32, Int>(repeating: -1)

    /// A decoder with nothing interned yet; `parallel` when other threads decode at the same
    /// time, so the objects every entry shares are this thread's own (their reference counts
    /// would otherwise bounce between processors). Without `sharing`, nothing is interned: for
    /// decoding one entry, where an interner's tables would cost more than they save.
    init(parallel: Bool = false, sharing: Bool = true) {
        interner = StringInterner(ownObjects: parallel)
        self.sharing = sharing
    }

    /// Forgets what was interned once it holds more than `limit` strings: for a decoder kept
    /// across many updates, whose memory must stay bounded.
    mutating func forgetIfLarge(limit: Int = 4_096) {
        guard interner.count > limit else { return }
        interner = StringInterner()
        hints = InlineArray(repeating: -1)
    }

    /// Decodes the payload of an entry of `kind`. Throws `.storeCorrupted` for a malformed one.
    mutating func decode(kind: CredentialKind, payload: ArraySlice<UInt8>) throws -> (ordinal: UInt64, entry: CacheEntry) {
        let ordinal = try read(payload)
        return (ordinal, CacheEntry(kind: kind, members: .payload(payload), parts: parts))
    }

    /// Checks a payload in full, as ``decode(kind:payload:)`` would, and interns only the members
    /// the index files the entry by: no typed entry, and no string for a secret, a timestamp or
    /// a name. Throws `.storeCorrupted` for a malformed payload.
    ///
    /// A member's text is a string's or a number literal's (what ``EntryParts/string(_:)``
    /// reads); any other value counts as none. ``FilingPart/key(slot:decoder:)`` makes the index
    /// keys of the slots.
    mutating func filingSlots(payload: ArraySlice<UInt8>) throws -> (ordinal: UInt64, slots: FilingSlots) {
        // By member code: the interned slot of the member's text (-1: no text).
        var texts = InlineArray<32, Int32>(repeating: -1)
        var assertion: Int32 = -1
        var dotNetKey: Int32 = -1
        let filing = Self.filingFields
        let ordinal = try payload.withUnsafeBytes { bytes in
            var reader = PayloadReader(bytes)
            let (ordinal, count) = try reader.header()
            for _ in 0..<count {
                let code = Int(try reader.byte())
                guard code != 0 else {
                    if UserAssertion.isMemberName(try reader.text()) {
                        assertion = try reader.textValue().map { Int32(truncatingIfNeeded: interner.slot(of: $0)) } ?? -1
                    } else {
                        try reader.skipValue()
                    }
                    continue
                }
                guard code <= KnownField.largestCode else { throw PayloadReader.malformed }
                if code == Int(KnownField.extComponents.rawValue) {
                    let components = try reader.value { String(decoding: $0, as: UTF8.self) }
                    dotNetKey = internedKey(ofDotNet: components)
                    continue
                }
                guard filing & 1 << UInt32(code) != 0 else {
                    try reader.skipValue()
                    continue
                }
                guard let text = try reader.textValue() else {
                    texts[code] = -1
                    continue
                }
                texts[code] = Int32(truncatingIfNeeded: interner.slot(of: text, hint: &hints[code]))
            }
            guard reader.isAtEnd else { throw PayloadReader.malformed }
            return ordinal
        }
        preferExtCacheKey(in: &texts, over: dotNetKey)
        return (ordinal, FilingSlots(texts, assertion: assertion))
    }

    /// ``filingSlots(payload:)`` of an entry's members held as an object (an entry made in this
    /// process, gathered for a bulk filing).
    mutating func filingSlots(members: JSONObject) -> FilingSlots {
        var texts = InlineArray<32, Int32>(repeating: -1)
        var assertion: Int32 = -1
        var dotNetKey: Int32 = -1
        for member in members {
            // Only the members filed by are interned (never a secret).
            if let field = KnownField(name: member.key) {
                if field == .extComponents { dotNetKey = internedKey(ofDotNet: member.value) }
                guard Self.filingFields & 1 << UInt32(field.rawValue) != 0 else { continue }
                texts[Int(field.rawValue)] = interned(member.value)
            } else if UserAssertion.memberNames.contains(member.key) {
                assertion = interned(member.value)
            }
        }
        preferExtCacheKey(in: &texts, over: dotNetKey)
        return FilingSlots(texts, assertion: assertion)
    }

    /// The interned slot of the extended cache key of MSAL.NET's components
    /// (``ExtendedCacheKey/of(dotNet:)``); -1 when they make none.
    private mutating func internedKey(ofDotNet components: JSONValue) -> Int32 {
        guard var key = ExtendedCacheKey.of(dotNet: components) else { return -1 }
        return key.withUTF8 { Int32(truncatingIfNeeded: interner.slot(of: UnsafeRawBufferPointer($0))) }
    }

    /// Files an entry by the key of MSAL.NET's components (`dotNetKey`, an interned slot or -1)
    /// when it has no `ext_cache_key` text of its own, as ``EntryParts/extCacheKey()`` reads it.
    private func preferExtCacheKey(in texts: inout InlineArray<32, Int32>, over dotNetKey: Int32) {
        let code = Int(KnownField.extCacheKey.rawValue)
        if dotNetKey >= 0, !hasText(texts[code]) { texts[code] = dotNetKey }
    }

    /// The interned slot of a member's text (-1: no text).
    private mutating func interned(_ value: JSONValue) -> Int32 {
        switch value {
        case .string(var text), .number(var text):
            text.withUTF8 { Int32(truncatingIfNeeded: interner.slot(of: UnsafeRawBufferPointer($0))) }
        default:
            -1
        }
    }

    /// Whether the slot holds text that is not empty.
    func hasText(_ slot: Int32) -> Bool { slot >= 0 && !interner.isEmpty(at: Int(slot)) }

    /// The alias group key of the cloud in `slot`, which holds text (``EntryParts/environment()``).
    mutating func cloudKey(_ slot: Int32) -> HashedString {
        interner.environment(at: Int(slot)).groupKey
    }

    /// The text in `slot`, which holds text, lower-cased, with its hash
    /// (``EntryParts/lowercasedKey(_:)``).
    mutating func lowercasedKey(_ slot: Int32) -> HashedString {
        interner.lowercasedKey(at: Int(slot))
    }

    /// The text in `slot`, which holds text, as it is, with its hash.
    mutating func exactKey(_ slot: Int32) -> HashedString {
        interner.exactKey(at: Int(slot))
    }

    /// The assertion-hash key of the text in `slot`, which holds text (``UserAssertion/key(of:)``).
    /// Not memoised: every on-behalf-of assertion has a hash of its own.
    mutating func assertionKey(_ slot: Int32) -> HashedString? {
        UserAssertion.key(of: interner.string(at: Int(slot)))
    }

    /// The known members the index files entries by (``FilingPart/field``), one bit per member
    /// code.
    private static let filingFields: UInt32 = FilingPart.allCases.reduce(0) {
        $0 | ($1.field.map { 1 << UInt32($0.rawValue) } ?? 0)
    }

    /// Reads a payload's members into `parts`, checking every one; returns its ordinal.
    private mutating func read(_ payload: ArraySlice<UInt8>) throws -> UInt64 {
        parts.reset()
        return try payload.withUnsafeBytes { bytes in
            var reader = PayloadReader(bytes)
            let (ordinal, count) = try reader.header()
            for _ in 0..<count {
                let code = try reader.byte()
                guard code != 0 else {
                    // A member stored by name: check it, keep it in the payload. Only the
                    // assertion hash is read from one.
                    if UserAssertion.isMemberName(try reader.text()) {
                        parts.assertionHash = try reader.textValue().map { String(decoding: $0, as: UTF8.self) }
                    } else {
                        try reader.skipValue()
                    }
                    continue
                }
                guard let field = KnownField.byCode[Int(code)] else { throw PayloadReader.malformed }
                guard sharing else {
                    parts[field] = try reader.value { String(decoding: $0, as: UTF8.self) }
                    continue
                }
                parts[field] = try reader.value { bytes in
                    // Interned: the members many entries share, with what is parsed from them.
                    // The rest (secrets, names, timestamps) are mostly unique or too short to
                    // allocate, and hashing them would only cost time.
                    let slot: Int
                    switch field {
                    case .homeAccountId:
                        slot = interner.slot(of: UnsafeRawBufferPointer(bytes), hint: &hints[Int(code)])
                        parts.homeAccount = interner.homeAccountId(at: slot)
                    case .environment:
                        slot = interner.slot(of: UnsafeRawBufferPointer(bytes), hint: &hints[Int(code)])
                        parts.cloud = interner.environment(at: slot)
                    case .target:
                        slot = interner.slot(of: UnsafeRawBufferPointer(bytes), hint: &hints[Int(code)])
                        parts.scopes = interner.scopes(at: slot)
                    case .clientId, .realm, .tokenType, .extCacheKey:
                        slot = interner.slot(of: UnsafeRawBufferPointer(bytes), hint: &hints[Int(code)])
                        parts.setLowercasedKey(interner.lowercasedKey(at: slot), for: field)
                    default:
                        return String(decoding: bytes, as: UTF8.self)
                    }
                    return interner.string(at: slot)
                }
            }
            guard reader.isAtEnd else { throw PayloadReader.malformed }
            return ordinal
        }
    }
}

/// Reads the parts of an ``EntryPayload``, checking every length.
struct PayloadReader {
    static let malformed = TokenCacheError(.storeCorrupted, "an entry record is malformed: the group is damaged")

    private let bytes: UnsafeRawBufferPointer
    private var position = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { position == bytes.count }

    /// A payload's header: its ordinal and how many members follow (checked to be no more than
    /// the bytes could hold). A payload of another version is `.unsupportedFormat`: written by a
    /// newer library.
    mutating func header() throws -> (ordinal: UInt64, count: UInt64) {
        guard try byte() == EntryPayload.version else {
            throw TokenCacheError(
                .unsupportedFormat, "an entry record has an unknown format; upgrade SecureTokenCache to read this group")
        }
        let ordinal = try uint64()
        let count = try varint()
        guard count <= UInt64(bytes.count) else { throw Self.malformed }
        return (ordinal, count)
    }

    mutating func byte() throws -> UInt8 {
        guard position < bytes.count else { throw Self.malformed }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func uint64() throws -> UInt64 {
        guard bytes.count - position >= 8 else { throw Self.malformed }
        defer { position += 8 }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self))
    }

    mutating func varint() throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = try byte()
            guard shift < 64 else { throw Self.malformed }
            value |= UInt64(next & 0x7F) << shift
            if next < 0x80 { return value }
            shift += 7
        }
    }

    /// A member's value; `text` makes a string from UTF-8 bytes (and may intern it). A parsed
    /// string-valued member of a known field also updates the memos `text` sets.
    mutating func value(_ text: (UnsafeBufferPointer<UInt8>) -> String) throws -> JSONValue {
        switch EntryPayload.ValueType(rawValue: try byte()) {
        case .string?: return .string(text(try self.text().assumingMemoryBound(to: UInt8.self)))
        case .number?: return .number(String(decoding: try self.text(), as: UTF8.self))
        case .true?: return .bool(true)
        case .false?: return .bool(false)
        case .null?: return .null
        case .json?:
            do {
                return try JSONParser.parse(try self.text().assumingMemoryBound(to: UInt8.self))
            } catch {
                throw Self.malformed
            }
        case nil: throw Self.malformed
        }
    }

    /// A member's value as text: a string's bytes or a number's literal; `nil` for any other
    /// value, which is checked and passed over.
    mutating func textValue() throws -> UnsafeRawBufferPointer? {
        switch EntryPayload.ValueType(rawValue: try byte()) {
        case .string?, .number?: return try text()
        case .true?, .false?, .null?: return nil
        case .json?:
            do {
                _ = try JSONParser.parse(try text().assumingMemoryBound(to: UInt8.self))
            } catch {
                throw Self.malformed
            }
            return nil
        case nil: throw Self.malformed
        }
    }

    /// Writes a member's value as ``JSONWriter`` writes the value ``value(_:)`` reads, in `style`
    /// at nesting `level`.
    mutating func writeValue(style: JSONWriter.Style, level: Int, into output: inout [UInt8]) throws {
        switch EntryPayload.ValueType(rawValue: try byte()) {
        case .string?: JSONWriter.writeString(utf8: try text(), style: style, into: &output)
        case .number?:
            let literal = try text()
            if style == .python {
                output.append(contentsOf: JSONWriter.pythonNumber(String(decoding: literal, as: UTF8.self)).utf8)
            } else {
                output.append(contentsOf: literal)
            }
        case .true?: output.append(contentsOf: "true".utf8)
        case .false?: output.append(contentsOf: "false".utf8)
        case .null?: output.append(contentsOf: "null".utf8)
        case .json?:
            let value: JSONValue
            do {
                value = try JSONParser.parse(try text().assumingMemoryBound(to: UInt8.self))
            } catch {
                throw Self.malformed
            }
            JSONWriter.write(value, style: style, level: level, into: &output)
        case nil: throw Self.malformed
        }
    }

    /// Checks a member's value and moves past it, making nothing of it.
    mutating func skipValue() throws {
        switch EntryPayload.ValueType(rawValue: try byte()) {
        case .string?, .number?: _ = try text()
        case .true?, .false?, .null?: break
        case .json?:
            do {
                _ = try JSONParser.parse(try text().assumingMemoryBound(to: UInt8.self))
            } catch {
                throw Self.malformed
            }
        case nil: throw Self.malformed
        }
    }

    /// A length-prefixed run of bytes.
    mutating func text() throws -> UnsafeRawBufferPointer {
        let length = try varint()
        guard length <= UInt64(bytes.count - position) else { throw Self.malformed }
        defer { position += Int(length) }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<(position + Int(length))])
    }
}

/// Payloads written one after another into blocks of about a mebibyte, each payload a slice of
/// its block: an import of a large document allocates per block, not per entry, as a store's
/// sealed batches do (a block lives while any entry read from it does).
struct PayloadBlocks: ~Copyable {
    /// The size of a block.
    static let blockSize = 1 << 20

    private var finished: [[UInt8]] = []
    /// The block being written, copied into an array of its size when it is full (and the room
    /// written again for the next one).
    private var current: PayloadWriter

    /// Blocks for the payloads of a document of `expectedBytes`: a payload is smaller than its
    /// JSON, so the first block need not be larger.
    init(expectedBytes: Int) {
        current = PayloadWriter(capacity: min(Self.blockSize, expectedBytes))
    }

    /// Appends what `write` writes to the block being written, with `scratch` for it to use;
    /// returns the block and the range it is in, or `nil` (with nothing appended) when `write`
    /// returns `false`.
    mutating func append(
        scratch: inout PayloadWriter, _ write: (inout PayloadWriter, inout PayloadWriter) throws -> Bool
    ) rethrows -> (block: Int, range: Range<Int>)? {
        let start = current.count
        guard try write(&current, &scratch) else { return nil }
        let written = (block: finished.count, range: start..<current.count)
        if current.count >= Self.blockSize {
            finished.append(current.bytes)
            current.removeAll()
        }
        return written
    }

    /// Closes the block being written and appends `more` after it; returns the index `more`'s
    /// first block has among the blocks ``finish()`` gives.
    mutating func append(_ more: consuming [[UInt8]]) -> Int {
        finished.append(current.bytes)
        current.removeAll()
        let first = finished.count
        finished += more
        return first
    }

    /// Every block, in order (the ranges ``append(scratch:_:)`` returned are in them).
    consuming func finish() -> [[UInt8]] {
        finished + [current.bytes]
    }
}

/// Writes the parts of an ``EntryPayload`` into memory it owns and grows: the inverse of
/// ``PayloadReader``. Plain stores, not array appends: each of those checks its array's
/// uniqueness and capacity, and a payload is written a byte or a few at a time.
struct PayloadWriter: ~Copyable {
    private var start: UnsafeMutableRawPointer
    private var capacity: Int
    /// How many bytes are written.
    private(set) var count = 0

    /// A writer with room for `capacity` bytes.
    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        start = .allocate(byteCount: self.capacity, alignment: 1)
    }

    deinit { start.deallocate() }

    /// What is written, as an array of its size.
    var bytes: [UInt8] { Array(UnsafeRawBufferPointer(start: start, count: count)) }

    /// Makes room for `more` bytes.
    @inline(__always)
    private mutating func reserve(_ more: Int) {
        guard count + more > capacity else { return }
        capacity = max(2 * capacity, count + more)
        let grown = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1)
        grown.copyMemory(from: start, byteCount: count)
        start.deallocate()
        start = grown
    }

    /// A payload's header: the version, the ordinal and how many members follow.
    mutating func header(ordinal: UInt64, memberCount: Int) {
        reserve(9)
        start.storeBytes(of: EntryPayload.version, toByteOffset: count, as: UInt8.self)
        start.storeBytes(of: ordinal.littleEndian, toByteOffset: count + 1, as: UInt64.self)
        count += 9
        varint(UInt64(memberCount))
    }

    mutating func byte(_ value: UInt8) {
        reserve(1)
        start.storeBytes(of: value, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    /// `value` as an unsigned LEB128 varint.
    mutating func varint(_ value: UInt64) {
        reserve(10)
        var value = value
        while value >= 0x80 {
            start.storeBytes(of: UInt8(truncatingIfNeeded: value) | 0x80, toByteOffset: count, as: UInt8.self)
            count += 1
            value >>= 7
        }
        start.storeBytes(of: UInt8(value), toByteOffset: count, as: UInt8.self)
        count += 1
    }

    /// A length-prefixed run of bytes.
    mutating func text(_ text: UnsafeRawBufferPointer) {
        varint(UInt64(text.count))
        raw(text)
    }

    /// A string's UTF-8 bytes, length-prefixed.
    mutating func text(_ string: String) {
        var string = string
        string.withUTF8 { text(UnsafeRawBufferPointer($0)) }
    }

    /// Bytes as they are.
    mutating func raw(_ raw: UnsafeRawBufferPointer) {
        guard let source = raw.baseAddress else { return }
        reserve(raw.count)
        (start + count).copyMemory(from: source, byteCount: raw.count)
        count += raw.count
    }

    /// Appends what `other` wrote.
    mutating func raw(_ other: borrowing PayloadWriter) {
        raw(UnsafeRawBufferPointer(start: other.start, count: other.count))
    }

    /// Forgets what was written, keeping the room.
    mutating func removeAll() { count = 0 }

    /// `read` with what is written from byte `offset` on.
    func withBytes<Result>(from offset: Int, _ read: (UnsafeRawBufferPointer) -> Result) -> Result {
        read(UnsafeRawBufferPointer(start: start + offset, count: count - offset))
    }
}
