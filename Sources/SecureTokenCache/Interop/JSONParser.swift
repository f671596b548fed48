/// A strict JSON (RFC 8259) reader that keeps member order and number literals.
///
/// Foundation's `JSONSerialization` loses both, and byte-exact round trips of MSAL caches need
/// them. Errors name the byte offset, never the surrounding text (it may be a token).
///
/// Besides whole documents, it reads one piece at a time (``beginObject()``, ``memberName()``,
/// ``endOfMember()``, ``parseValue()``...): a reader that turns a large document straight into
/// what it keeps reads it with the same checks, in the same order, with the same errors at the
/// same offsets as a whole parse of it.
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    /// Where the next unread byte is.
    private(set) var position = 0
    private var depth = 0

    /// A parser at the start of `bytes`.
    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// A parser at `position` in `bytes`, inside `depth` arrays and objects: where a parser of
    /// all of `bytes` would be on reaching that position, for a read of the rest of a document
    /// that another read of its start checks it meets.
    init(_ bytes: UnsafeBufferPointer<UInt8>, at position: Int, depth: Int) {
        self.bytes = bytes
        self.position = position
        self.depth = depth
    }

    /// A string as read: its bytes, when it has no escape (valid UTF-8, in the document), else
    /// its text.
    enum StringValue {
        case utf8(UnsafeBufferPointer<UInt8>)
        case text(String)

        /// The string's text.
        var string: String {
            switch self {
            case .utf8(let bytes): String(decoding: bytes, as: UTF8.self)
            case .text(let text): text
            }
        }

        /// Calls `body` with the string's UTF-8 bytes.
        func withUTF8<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
            switch self {
            case .utf8(let bytes): return try body(bytes)
            case .text(var text): return try text.withUTF8(body)
            }
        }
    }

    /// Parses one JSON document; anything but whitespace after it is an error.
    static func parse(_ data: some Collection<UInt8>) throws -> JSONValue {
        if let parsed = try data.withContiguousStorageIfAvailable(parse) { return parsed }
        return try Array(data).withUnsafeBufferPointer(parse)
    }

    /// Parses one JSON document held in contiguous memory (no copy).
    static func parse(_ buffer: UnsafeBufferPointer<UInt8>) throws -> JSONValue {
        var parser = JSONParser(buffer)
        parser.skipWhitespace()
        let value = try parser.parseValue()
        try parser.finish()
        return value
    }

    /// Checks that only whitespace follows what was read.
    mutating func finish() throws {
        skipWhitespace()
        guard position == bytes.count else { throw failure("unexpected data after the JSON document") }
    }

    /// The next byte, if any.
    func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

    /// Parses one JSON document held in a string.
    static func parse(_ text: String) throws -> JSONValue {
        try parse(Array(text.utf8))
    }

    private func failure(_ what: String) -> TokenCacheError {
        TokenCacheError(.malformedCache, "invalid JSON at byte \(position): \(what)")
    }

    /// Moves past whitespace.
    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    /// Moves past whitespace, as ``skipWhitespace()``, eight bytes at a time: before a member
    /// name or an object's end, where a pretty-printed cache (msal-python indents by four) has a
    /// line break and up to a dozen spaces. Each byte is tested exactly, so the scan stops at the
    /// first other byte, as one a byte at a time does.
    mutating func skipIndentation() {
        guard position < bytes.count, bytes[position] <= 0x20 else { return }
        while bytes.count - position >= 8 {
            let word = UnsafeRawPointer(bytes.baseAddress! + position).loadUnaligned(as: UInt64.self)
            let blank =
                WordBytes.exactlyEqual(word, 0x20) | WordBytes.exactlyEqual(word, 0x0A)
                | WordBytes.exactlyEqual(word, 0x09) | WordBytes.exactlyEqual(word, 0x0D)
            let other = ~blank & WordBytes.high
            if other != 0 {
                position += other.trailingZeroBitCount / 8
                return
            }
            position += 8
        }
        skipWhitespace()
    }

    /// Parses the value at the current position.
    mutating func parseValue() throws -> JSONValue {
        guard position < bytes.count else { throw failure("unexpected end of data") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return .object(try parseObject())
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw failure("unexpected character")
        }
    }

    /// Moves past `literal` (`true`, `false` or `null`), which must be next.
    mutating func expectLiteral(_ literal: StaticString) throws {
        let count = literal.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw failure("unexpected end of data") }
        for offset in 0..<count where bytes[position + offset] != literal.utf8Start[offset] {
            throw failure("unexpected character")
        }
        position += count
    }

    private mutating func enter() throws {
        depth += 1
        guard depth <= 512 else { throw failure("nesting deeper than 512 levels") }
    }

    private mutating func parseObject() throws -> JSONObject {
        guard try beginObject() else { return JSONObject() }
        var members: [(key: String, value: JSONValue)] = []
        members.reserveCapacity(16)
        repeat {
            let key = try memberName().string
            members.append((key: key, value: try parseValue()))
        } while try endOfMember()
        return JSONObject(members)
    }

    /// Moves into the object whose `{` is next; returns whether it has members (without any, it
    /// is read to its end).
    mutating func beginObject() throws -> Bool {
        try enter()
        position += 1
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return false
        }
        return true
    }

    /// Reads a member's name and the `:` after it, leaving the position at its value.
    mutating func memberName() throws -> StringValue {
        skipIndentation()
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw failure("expected a member name") }
        let name = try parseStringValue()
        skipWhitespace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw failure("expected ':'") }
        position += 1
        skipWhitespace()
        return name
    }

    /// A member name a reader expects next (``skipMemberName(_:)``), held as the words of its
    /// bytes with their quotes, so that it is compared with the document without a scan.
    struct ExpectedName: Sendable {
        private var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
        private var masks: (UInt64, UInt64, UInt64) = (0, 0, 0)
        /// The quoted name's length; 0 for ``never``.
        private var count = 0

        /// A name that is never next.
        static let never = ExpectedName()

        private init() {}

        /// `name`, which must be at most 22 bytes of UTF-8 that JSON writes without escapes.
        init(_ name: String) {
            let quoted = Array("\"\(name)\"".utf8)
            precondition(
                quoted.count <= 24 && !quoted.dropFirst().dropLast().contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C },
                "an expected member name fits in three words and needs no escape")
            count = quoted.count
            quoted.withUnsafeBytes { bytes in
                words = (WordBytes.load(bytes, at: 0), WordBytes.load(bytes, at: 8), WordBytes.load(bytes, at: 16))
            }
            func mask(from offset: Int) -> UInt64 {
                let covered = min(max(count - offset, 0), 8)
                return covered == 8 ? .max : (1 << UInt64(8 * covered)) - 1
            }
            masks = (mask(from: 0), mask(from: 8), mask(from: 16))
        }

        /// The quoted name's length when the 24 bytes at `start` begin with it.
        @inline(__always)
        fileprivate func isAt(_ start: UnsafeRawPointer) -> Int? {
            guard count > 0, start.loadUnaligned(as: UInt64.self) & masks.0 == words.0,
                start.loadUnaligned(fromByteOffset: 8, as: UInt64.self) & masks.1 == words.1,
                start.loadUnaligned(fromByteOffset: 16, as: UInt64.self) & masks.2 == words.2
            else { return nil }
            return count
        }
    }

    /// Moves past the member name `expected` and the `:` after it when they are next (with
    /// whitespace around them), and returns `true`; otherwise moves past whitespace only, for
    /// ``memberName()`` to read the name. The entries of one section of an MSAL cache have their
    /// members in one order, so a reader that expects the previous entry's order compares each
    /// name with one known name instead of scanning it and looking it up. A name that matches
    /// byte for byte holds no escape: it is the name ``memberName()`` would have read.
    mutating func skipMemberName(_ expected: ExpectedName) -> Bool {
        skipIndentation()
        // Three whole words past the position: a name near the end of the data is read as any other.
        guard bytes.count - position > 24,
            let count = expected.isAt(UnsafeRawPointer(bytes.baseAddress! + position))
        else { return false }
        let start = position
        position += count
        skipWhitespace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
            position = start
            return false
        }
        position += 1
        skipWhitespace()
        return true
    }

    /// Moves past what follows a member's value: `true` after a comma (another member follows),
    /// `false` after the object's `}`.
    mutating func endOfMember() throws -> Bool {
        skipIndentation()
        guard position < bytes.count else { throw failure("unexpected end of data") }
        if bytes[position] == UInt8(ascii: ",") {
            position += 1
            return true
        } else if bytes[position] == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return false
        } else {
            throw failure("expected ',' or '}'")
        }
    }

    private mutating func parseArray() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard position < bytes.count else { throw failure("unexpected end of data") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
            } else if bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(elements)
            } else {
                throw failure("expected ',' or ']'")
            }
        }
    }

    private mutating func parseNumber() throws -> String {
        String(decoding: try numberLiteral(), as: UTF8.self)
    }

    /// Reads the number that is next; returns its literal's bytes.
    mutating func numberLiteral() throws -> UnsafeBufferPointer<UInt8> {
        let start = position
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count, isDigit(bytes[position]) else { throw failure("invalid number") }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else {
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard position < bytes.count, isDigit(bytes[position]) else { throw failure("invalid number") }
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard position < bytes.count, isDigit(bytes[position]) else { throw failure("invalid number") }
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        return UnsafeBufferPointer(rebasing: bytes[start..<position])
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func parseString() throws -> String {
        try parseStringValue().string
    }

    /// Reads the string whose opening quote is next.
    mutating func parseStringValue() throws -> StringValue {
        position += 1
        let start = position
        // Fast path: no escapes. Eight bytes at a time up to the first quote, backslash or
        // control character: a token cache is mostly long strings (keys, ids, tokens).
        var bits: UInt64 = 0
        while bytes.count - position >= 8 {
            let word = UnsafeRawPointer(bytes.baseAddress! + position).loadUnaligned(as: UInt64.self)
            let stops = Self.stops(in: word)
            if stops != 0 {
                // The bytes before the first one that stops the scan.
                let before = stops.trailingZeroBitCount / 8
                bits |= before == 0 ? 0 : word & (UInt64.max >> UInt64(64 - 8 * before))
                position += before
                break
            }
            bits |= word
            position += 8
        }
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
                position += 1
                // ASCII needs no validation (and `String(validating:)` is generic, not cheap).
                if bits & 0x8080_8080_8080_8080 == 0 { return .utf8(slice) }
                guard String.validUTF8(slice) != nil else { throw failure("invalid UTF-8 in a string") }
                return .utf8(slice)
            }
            bits |= UInt64(byte)
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw failure("control character in a string") }
            position += 1
        }
        return .text(try parseEscapedString(from: start))
    }

    /// The bytes of `word` that are a quote, a backslash or a control character (``WordBytes``):
    /// where a string's fast scan stops.
    @inline(__always)
    static func stops(in word: UInt64) -> UInt64 {
        WordBytes.equal(word, UInt8(ascii: "\"")) | WordBytes.equal(word, UInt8(ascii: "\\")) | WordBytes.below(word, 0x20)
    }

    /// The rest of a string from `start` (after its opening quote), the position at the first
    /// byte the fast scan did not take (an escape, or the end of the data).
    private mutating func parseEscapedString(from start: Int) throws -> String {
        var scalars = String.UnicodeScalarView()
        guard let prefix = String.validUTF8(UnsafeBufferPointer(rebasing: bytes[start..<position])) else {
            throw failure("invalid UTF-8 in a string")
        }
        scalars.append(contentsOf: prefix.unicodeScalars)
        var runStart = position
        func flushRun(_ parser: JSONParser, upTo end: Int) throws {
            guard runStart < end else { return }
            guard let run = String.validUTF8(UnsafeBufferPointer(rebasing: parser.bytes[runStart..<end])) else {
                throw parser.failure("invalid UTF-8 in a string")
            }
            scalars.append(contentsOf: run.unicodeScalars)
        }
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                try flushRun(self, upTo: position)
                position += 1
                return String(scalars)
            }
            guard byte >= 0x20 else { throw failure("control character in a string") }
            if byte != UInt8(ascii: "\\") {
                position += 1
                continue
            }
            try flushRun(self, upTo: position)
            position += 1
            guard position < bytes.count else { break }
            let escape = bytes[position]
            position += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                let unit = try parseHex4()
                if (0xD800..<0xDC00).contains(unit) {
                    // A high surrogate must be followed by an escaped low surrogate.
                    if position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
                    {
                        let saved = position
                        position += 2
                        let low = try parseHex4()
                        if (0xDC00..<0xE000).contains(low) {
                            let value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                            scalars.append(Unicode.Scalar(value)!)
                        } else {
                            scalars.append("\u{FFFD}")
                            position = saved
                        }
                    } else {
                        scalars.append("\u{FFFD}")
                    }
                } else if (0xDC00..<0xE000).contains(unit) {
                    scalars.append("\u{FFFD}")
                } else {
                    scalars.append(Unicode.Scalar(unit)!)
                }
            default: throw failure("invalid escape in a string")
            }
            runStart = position
        }
        throw failure("unterminated string")
    }

    private mutating func parseHex4() throws -> UInt16 {
        guard position + 4 <= bytes.count else { throw failure("truncated \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard let digit = HexDigit.value(bytes[position]) else { throw failure("invalid \\u escape") }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }
}
