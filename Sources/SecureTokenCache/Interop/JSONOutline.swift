/// The members of a JSON object found without parsing their values: each member's key and the
/// bytes of its value.
///
/// A reader of a document another program rewrites whole (a shared MSAL cache) compares each
/// entry's bytes with the ones it read last time and parses only those that differ; the outline
/// is what lets it skip the rest. It checks the object's own structure (braces, strings, colons,
/// commas, nesting) but not the values inside: whoever uses a value's bytes parses them with
/// ``JSONParser`` first, or compares them with bytes that were parsed before.
enum JSONOutline {
    /// One member: its key and where its value's bytes are.
    struct Member {
        var key: String
        var value: Range<Int>
    }

    /// The members of the object that `range` of `bytes` holds (surrounding whitespace allowed),
    /// in order, or `nil` when it holds something else (an array, a string, a number...).
    ///
    /// A repeated key is one member, at its first position with its last value, as
    /// ``JSONParser`` (and Python's `json.loads`) reads it: a reader of the outline files what a
    /// whole import of the same bytes files.
    ///
    /// - Throws: ``TokenCacheError/Code/malformedCache`` naming the byte offset when the object
    ///   is not well formed.
    static func members(of bytes: [UInt8], in range: Range<Int>) throws -> [Member]? {
        try bytes.withUnsafeBufferPointer { buffer in
            var scanner = Scanner(bytes: buffer, position: range.lowerBound, end: range.upperBound)
            scanner.skipWhitespace()
            guard scanner.peek() == UInt8(ascii: "{") else { return nil }
            let members = try scanner.object()
            scanner.skipWhitespace()
            guard scanner.position == range.upperBound else { throw scanner.failure("unexpected data after the JSON object") }
            return try unique(members, in: buffer)
        }
    }

    /// `members` with each repeated key once, at its first position with its last value. The
    /// values a repeated key drops are parsed here, as nobody reads them later: the object is
    /// refused when one is not JSON, as a whole parse refuses it.
    private static func unique(_ members: [Member], in bytes: UnsafeBufferPointer<UInt8>) throws -> [Member] {
        var position: [String: Int] = [:]
        position.reserveCapacity(members.count)
        var unique: [Member] = []
        unique.reserveCapacity(members.count)
        for member in members {
            if let existing = position[member.key] {
                _ = try JSONParser.parse(UnsafeBufferPointer(rebasing: bytes[unique[existing].value]))
                unique[existing].value = member.value
            } else {
                position[member.key] = unique.count
                unique.append(member)
            }
        }
        return unique
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var position: Int
        let end: Int
        /// How deep values may nest, as ``JSONParser`` allows.
        static let maximumDepth = 512

        func failure(_ what: String) -> TokenCacheError {
            TokenCacheError(.malformedCache, "invalid JSON at byte \(position): \(what)")
        }

        func peek() -> UInt8? { position < end ? bytes[position] : nil }

        mutating func skipWhitespace() {
            while position < end {
                switch bytes[position] {
                case 0x20, 0x09, 0x0A, 0x0D: position += 1
                default: return
                }
            }
        }

        mutating func expect(_ byte: UInt8, _ what: String) throws {
            guard peek() == byte else { throw failure("expected \(what)") }
            position += 1
        }

        /// The members of the object at `position` (its `{`), leaving `position` after its `}`.
        mutating func object() throws -> [Member] {
            try expect(UInt8(ascii: "{"), "an object")
            var members: [Member] = []
            skipWhitespace()
            if peek() == UInt8(ascii: "}") {
                position += 1
                return members
            }
            while true {
                skipWhitespace()
                let key = try keyString()
                skipWhitespace()
                try expect(UInt8(ascii: ":"), "':' after a key")
                skipWhitespace()
                let start = position
                try skipValue()
                members.append(Member(key: key, value: start..<position))
                skipWhitespace()
                guard let next = peek() else { throw failure("unexpected end of data") }
                position += 1
                if next == UInt8(ascii: "}") { return members }
                guard next == UInt8(ascii: ",") else { throw failure("expected ',' or '}'") }
            }
        }

        /// A key: read directly when it is plain ASCII without escapes (every MSAL key), else
        /// by ``JSONParser``, which checks escapes and UTF-8.
        mutating func keyString() throws -> String {
            let start = position
            try skipString()
            let body = UnsafeBufferPointer(rebasing: bytes[(start + 1)..<(position - 1)])
            if !body.contains(where: { $0 == UInt8(ascii: "\\") || $0 >= 0x80 }) {
                return String(decoding: body, as: UTF8.self)
            }
            guard case .string(let key) = try JSONParser.parse(UnsafeBufferPointer(rebasing: bytes[start..<position])) else {
                throw failure("expected a string key")
            }
            return key
        }

        /// Moves past the string at `position` (its opening quote).
        mutating func skipString() throws {
            try expect(UInt8(ascii: "\""), "a string")
            while position < end {
                let byte = bytes[position]
                position += 1
                if byte == UInt8(ascii: "\"") { return }
                if byte == UInt8(ascii: "\\") { position += 1 }
                if byte < 0x20 { throw failure("a control character in a string") }
            }
            throw failure("unexpected end of data in a string")
        }

        /// Moves past one value, checking only how strings and brackets nest.
        mutating func skipValue() throws {
            guard let first = peek() else { throw failure("unexpected end of data") }
            switch first {
            case UInt8(ascii: "\""):
                try skipString()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var closers: [UInt8] = []
                repeat {
                    guard let byte = peek() else { throw failure("unexpected end of data") }
                    switch byte {
                    case UInt8(ascii: "\""):
                        try skipString()
                        continue
                    case UInt8(ascii: "{"): closers.append(UInt8(ascii: "}"))
                    case UInt8(ascii: "["): closers.append(UInt8(ascii: "]"))
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        guard closers.popLast() == byte else { throw failure("mismatched brackets") }
                    default: break
                    }
                    guard closers.count <= Self.maximumDepth else { throw failure("values nest too deeply") }
                    position += 1
                } while !closers.isEmpty
            default:
                let start = position
                while let byte = peek(), !Self.ends(byte) { position += 1 }
                guard position > start else { throw failure("unexpected character") }
            }
        }

        /// Whether `byte` ends a number or a literal.
        static func ends(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D: true
            default: false
            }
        }
    }
}
