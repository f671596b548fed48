/// The plaintext of an MSAL entry's record (format 2): the entry's members in a binary form that
/// decodes without parsing JSON.
///
/// `2 ‖ ordinal u64le ‖ member count (varint) ‖ member…`, where a member is
/// `code u8 ‖ [name length (varint) ‖ name, when code is 0] ‖ type u8 ‖ value`. A non-zero code
/// is a ``KnownField``; the type is one of ``ValueType``, and strings, number literals and
/// nested JSON carry `length (varint) ‖ UTF-8 bytes`. Members keep their order, number literals
/// their spelling, and unknown members and nested values survive as they came, so an entry
/// decodes to exactly the ``JSONObject`` it was encoded from.
///
/// Format 1 (a version byte, the ordinal and the members as compact JSON) is still read.
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

    /// The payload of `stored`: the one it was read from when its ordinal is unchanged.
    static func encode(_ stored: StoredEntry) -> ArraySlice<UInt8> {
        if case .payload(let payload) = stored.entry.members, ordinal(of: payload) == stored.ordinal { return payload }
        let members = stored.entry.fields.members
        var output: [UInt8] = [version]
        output.reserveCapacity(64 + members.count * 48)
        withUnsafeBytes(of: stored.ordinal.littleEndian) { output.append(contentsOf: $0) }
        appendVarint(UInt64(members.count), to: &output)
        for member in members {
            if let field = KnownField(name: member.key) {
                output.append(field.rawValue)
            } else {
                output.append(0)
                appendText(member.key, to: &output)
            }
            switch member.value {
            case .string(let text):
                output.append(ValueType.string.rawValue)
                appendText(text, to: &output)
            case .number(let literal):
                output.append(ValueType.number.rawValue)
                appendText(literal, to: &output)
            case .bool(let flag):
                output.append(flag ? ValueType.true.rawValue : ValueType.false.rawValue)
            case .null:
                output.append(ValueType.null.rawValue)
            case .array, .object:
                output.append(ValueType.json.rawValue)
                var json: [UInt8] = []
                CompactJSONWriter.write(member.value, into: &json)
                appendVarint(UInt64(json.count), to: &output)
                output += json
            }
        }
        return output[...]
    }

    /// The ordinal a format-2 payload carries.
    private static func ordinal(of payload: ArraySlice<UInt8>) -> UInt64? {
        guard payload.count >= 9, payload.first == version else { return nil }
        return payload.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 1, as: UInt64.self)) }
    }

    /// Every member of a payload that ``EntryDecoder`` read before, in order.
    static func members(of payload: ArraySlice<UInt8>) -> JSONObject {
        do {
            return try payload.withUnsafeBytes { bytes in
                var reader = PayloadReader(bytes)
                _ = try reader.byte()
                _ = try reader.uint64()
                let count = try reader.varint()
                var members: [(key: String, value: JSONValue)] = []
                members.reserveCapacity(Int(min(count, 64)))
                for _ in 0..<count {
                    let code = try reader.byte()
                    let key = code == 0 ? String(decoding: try reader.text(), as: UTF8.self) : KnownField.byCode[Int(code)]!.name
                    members.append((key: key, value: try reader.value { String(decoding: $0, as: UTF8.self) }))
                }
                return JSONObject(members)
            }
        } catch {
            // The same bytes decoded when the entry was read; they cannot fail now.
            preconditionFailure("an entry payload that decoded before no longer decodes")
        }
    }

    private static func appendText(_ text: String, to output: inout [UInt8]) {
        var text = text
        text.withUTF8 { utf8 in
            appendVarint(UInt64(utf8.count), to: &output)
            output.append(contentsOf: utf8)
        }
    }

    /// Appends `value` as an unsigned LEB128 varint.
    static func appendVarint(_ value: UInt64, to output: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            output.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        output.append(UInt8(value))
    }
}

/// Decodes format-2 entry payloads into typed entries, sharing work across the entries of one
/// load: the members many entries repeat (account, cloud, client, tenant, scopes, token type)
/// are interned, one `String` per distinct text, and the ``HomeAccountId``, ``Environment``,
/// ``Scopes`` and index keys made from them are made once.
///
/// Only the members the engine reads are decoded; the entry keeps the payload for the rest
/// (``EntryMembers``). Not thread-safe: use one per thread.
struct EntryDecoder {
    private var interner: StringInterner
    private var parts = EntryParts()
    /// By member code: the slot that member's string had in the previous entry (-1: none).
    private var hints = InlineArray<32, Int>(repeating: -1)

    /// A decoder with nothing interned yet; `parallel` when other threads decode at the same
    /// time, so the objects every entry shares are this thread's own (their reference counts
    /// would otherwise bounce between processors).
    init(parallel: Bool = false) {
        interner = StringInterner(ownObjects: parallel)
    }

    /// Decodes the payload of an entry of `kind`. Throws `.storeCorrupted` for a malformed one.
    mutating func decode(kind: CredentialKind, payload: ArraySlice<UInt8>) throws -> (ordinal: UInt64, entry: CacheEntry) {
        parts.reset()
        let ordinal = try payload.withUnsafeBytes { bytes in
            var reader = PayloadReader(bytes)
            guard try reader.byte() == EntryPayload.version else { throw PayloadReader.malformed }
            let ordinal = try reader.uint64()
            let count = try reader.varint()
            guard count <= UInt64(bytes.count) else { throw PayloadReader.malformed }
            for _ in 0..<count {
                let code = try reader.byte()
                guard code != 0 else {
                    // A member the engine does not read: check it, keep it in the payload.
                    _ = try reader.text()
                    _ = try reader.value { _ in "" }
                    continue
                }
                guard let field = KnownField.byCode[Int(code)] else { throw PayloadReader.malformed }
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
        return (ordinal, CacheEntry(kind: kind, members: .payload(payload), parts: parts))
    }
}

/// Reads the parts of an ``EntryPayload``, checking every length.
struct PayloadReader {
    static let malformed = TokenCacheError(.storeCorrupted, "an entry record is malformed: the group is damaged")

    private let bytes: UnsafeRawBufferPointer
    private var position = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { position == bytes.count }

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

    /// A length-prefixed run of bytes.
    mutating func text() throws -> UnsafeRawBufferPointer {
        let length = try varint()
        guard length <= UInt64(bytes.count - position) else { throw Self.malformed }
        defer { position += Int(length) }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<(position + Int(length))])
    }
}
