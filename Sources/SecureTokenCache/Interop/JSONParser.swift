/// A strict JSON (RFC 8259) reader that keeps member order and number literals.
///
/// Foundation's `JSONSerialization` loses both, and byte-exact round trips of MSAL caches need
/// them. Errors name the byte offset, never the surrounding text (it may be a token).
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    private var depth = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

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
        parser.skipWhitespace()
        guard parser.position == buffer.count else { throw parser.failure("unexpected data after the JSON document") }
        return value
    }

    /// Parses one JSON document held in a string.
    static func parse(_ text: String) throws -> JSONValue {
        try parse(Array(text.utf8))
    }

    private func failure(_ what: String) -> TokenCacheError {
        TokenCacheError(.malformedCache, "invalid JSON at byte \(position): \(what)")
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws -> JSONValue {
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

    private mutating func expectLiteral(_ literal: StaticString) throws {
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
        try enter()
        defer { depth -= 1 }
        position += 1
        var members: [(key: String, value: JSONValue)] = []
        members.reserveCapacity(16)
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return JSONObject()
        }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw failure("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw failure("expected ':'") }
            position += 1
            skipWhitespace()
            members.append((key: key, value: try parseValue()))
            skipWhitespace()
            guard position < bytes.count else { throw failure("unexpected end of data") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
            } else if bytes[position] == UInt8(ascii: "}") {
                position += 1
                return JSONObject(members)
            } else {
                throw failure("expected ',' or '}'")
            }
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
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func parseString() throws -> String {
        position += 1
        let start = position
        // Fast path: no escapes.
        var bits: UInt8 = 0
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
                position += 1
                // ASCII needs no validation (and `String(validating:)` is generic, not cheap).
                if bits < 0x80 { return String(decoding: slice, as: UTF8.self) }
                guard let text = String(validating: slice, as: UTF8.self) else { throw failure("invalid UTF-8 in a string") }
                return text
            }
            bits |= byte
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw failure("control character in a string") }
            position += 1
        }
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
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("invalid \\u escape")
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }
}
