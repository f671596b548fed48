import Glibc

/// The members of a JSON object found without parsing their values: each member's key and the
/// bytes of its value.
///
/// A reader of a document another program rewrites whole (a shared MSAL cache) compares each
/// entry's bytes with the ones it read last time and parses only those that differ; the outline
/// is what lets it skip the rest. It checks the object's own structure (braces, strings, colons,
/// commas, nesting) but not the values inside: whoever uses a value's bytes parses them with
/// ``JSONParser`` first, or compares them with bytes that were parsed before.
enum JSONOutline {
    /// One member: its key and where its bytes are.
    struct Member {
        var key: String
        /// Where the member starts: its key's opening quote.
        var start: Int
        /// Where its value's bytes are.
        var value: Range<Int>

        /// The member's bytes, from its key to the end of its value.
        var bytes: Range<Int> { start..<value.upperBound }
    }

    /// How a member compares with the members of an earlier version of its object.
    struct Match {
        /// The earlier member with the same key; `nil` for a new key.
        var earlier: Int?
        /// Whether the member's bytes, key and value, are the earlier member's.
        var unchanged: Bool
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

    /// An object's members matched with those of an earlier version of it, and the members of
    /// the values that were outlined too, matched in the same way.
    struct Comparison {
        var members: [Member] = []
        /// How each member compares with the earlier ones.
        var matches: [Match] = []
        /// The outlines of members' values, by position in ``members``: those the caller asked
        /// for (objects) that changed.
        var inner: [Int: Comparison] = [:]
    }

    /// The members of the object that `range` of `bytes` holds, as ``members(of:in:)`` finds
    /// them, each matched with `earlier`, the members of an earlier version of the object in
    /// `earlierBytes`; and for each changed member whose key `inner` gives the earlier members
    /// of, its value's members matched with those (when the value is an object).
    ///
    /// A member whose bytes are those of the earlier member after the last one matched is
    /// recognized by comparing its bytes, not by scanning them: when another program rewrote the
    /// object with a few members changed, each of the others costs one comparison of memory,
    /// and only the changed ones are scanned. Values are still unchecked, as in
    /// ``members(of:in:)``; a value whose bytes equal an earlier one is as valid as it was.
    ///
    /// - Throws: ``TokenCacheError/Code/malformedCache`` as ``members(of:in:)``.
    static func members(
        of bytes: [UInt8], in range: Range<Int>, comparedWith earlier: [Member], in earlierBytes: [UInt8],
        inner: ((String) -> [Member]?)? = nil
    ) throws -> Comparison? {
        let compared = try bytes.withUnsafeBufferPointer { buffer in
            try earlierBytes.withUnsafeBufferPointer { earlierBuffer -> Comparison?? in
                var scanner = Scanner(bytes: buffer, position: range.lowerBound, end: range.upperBound)
                scanner.skipWhitespace()
                guard scanner.peek() == UInt8(ascii: "{") else { return .some(nil) }
                guard let compared = try scanner.object(comparedWith: earlier, in: earlierBuffer, inner: inner) else {
                    return nil
                }
                scanner.skipWhitespace()
                guard scanner.position == range.upperBound else { throw scanner.failure("unexpected data after the JSON object") }
                return compared
            }
        }
        if let compared { return compared }
        // A repeated key: the plain outline, which reads it as a whole parse does, matched by key.
        guard let members = try members(of: bytes, in: range) else { return nil }
        var positions: [String: Int] = [:]
        for (position, member) in earlier.enumerated() { positions[member.key] = position }
        let matches = members.map { member in
            let position = positions[member.key]
            return Match(
                earlier: position,
                unchanged: position.map { bytes[member.bytes].elementsEqual(earlierBytes[earlier[$0].bytes]) } ?? false)
        }
        return Comparison(members: members, matches: matches)
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

    /// How many bytes from `a` and `b` are the same, up to `limit`: memory compared in blocks,
    /// then byte by byte in the block that differs.
    static func commonLength(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ limit: Int) -> Int {
        var offset = 0
        var block = 4096
        while block >= 16 {
            while offset + block <= limit, memcmp(a + offset, b + offset, block) == 0 { offset += block }
            block /= 16
        }
        while offset < limit, a[offset] == b[offset] { offset += 1 }
        return offset
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var position: Int
        let end: Int
        /// How deep the object being outlined is in the one the scan started with: its values
        /// may nest that much less.
        var depth = 0
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
                members.append(try member().member)
                guard try endOfMember() else { return members }
            }
        }

        /// One member at `position` (its key's opening quote), leaving `position` after its value,
        /// and the outline of its value when `inner` gives earlier members for its key and the
        /// value is an object without a repeated key, with whether that outline is the earlier
        /// one: the same members, unchanged, in the same order.
        mutating func member(
            inner: ((String) -> [Member]?)? = nil, in earlierBytes: UnsafeBufferPointer<UInt8>? = nil
        ) throws -> (member: Member, inner: Comparison?, asBefore: Bool) {
            let start = position
            let key = try keyString()
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "':' after a key")
            skipWhitespace()
            let valueStart = position
            var outline: Comparison?
            var asBefore = false
            if let earlierBytes, peek() == UInt8(ascii: "{"), let earlier = inner?(key) {
                depth += 1
                outline = try object(comparedWith: earlier, in: earlierBytes, inner: nil)
                depth -= 1
                if let outline {
                    asBefore =
                        outline.matches.count == earlier.count
                        && outline.matches.indices.allSatisfy {
                            outline.matches[$0].unchanged && outline.matches[$0].earlier == $0
                        }
                } else {
                    position = valueStart
                }
            }
            if outline == nil { try skipValue() }
            return (Member(key: key, start: start, value: valueStart..<position), outline, asBefore)
        }

        /// Moves past what follows a member: `true` after a comma, `false` after the object's `}`.
        mutating func endOfMember() throws -> Bool {
            skipWhitespace()
            guard let next = peek() else { throw failure("unexpected end of data") }
            position += 1
            if next == UInt8(ascii: "}") { return false }
            guard next == UInt8(ascii: ",") else { throw failure("expected ',' or '}'") }
            return true
        }

        /// The members of the object at `position` (its `{`) matched with `earlier`, leaving
        /// `position` after its `}`; `nil` when a key repeats.
        mutating func object(
            comparedWith earlier: [Member], in earlierBytes: UnsafeBufferPointer<UInt8>, inner: ((String) -> [Member]?)?
        ) throws -> Comparison? {
            try expect(UInt8(ascii: "{"), "an object")
            var comparison = Comparison()
            comparison.members.reserveCapacity(earlier.count)
            comparison.matches.reserveCapacity(earlier.count)
            skipWhitespace()
            if peek() == UInt8(ascii: "}") {
                position += 1
                return comparison
            }
            // Which earlier members a member matched: one matched twice is a repeated key.
            var taken = [Bool](repeating: false, count: earlier.count)
            // The earlier members by key, made only when a member is not where it was.
            var positions: [String: Int]?
            var newKeys = Set<String>()
            var expected = 0
            while true {
                skipWhitespace()
                // A member whose value is outlined too is compared entry by entry there, not
                // first as a whole: a changed one would be compared twice up to its change.
                if inner == nil, expected < earlier.count, !taken[expected],
                    let run = recognizeRun(from: expected, of: earlier, in: earlierBytes, taken: taken, into: &comparison)
                {
                    for index in expected..<run { taken[index] = true }
                    expected = run
                } else if expected < earlier.count, !taken[expected], inner?(earlier[expected].key) == nil,
                    let same = recognize(earlier[expected], in: earlierBytes)
                {
                    taken[expected] = true
                    comparison.members.append(same)
                    comparison.matches.append(Match(earlier: expected, unchanged: true))
                    expected += 1
                } else {
                    let (member, outline, asBefore) = try member(inner: inner, in: earlierBytes)
                    if let outline { comparison.inner[comparison.members.count] = outline }
                    var position: Int?
                    if expected < earlier.count, earlier[expected].key == member.key {
                        position = expected
                    } else if !earlier.isEmpty {
                        if positions == nil {
                            positions = Dictionary(
                                earlier.enumerated().map { ($1.key, $0) }, uniquingKeysWith: { first, _ in first })
                        }
                        position = positions![member.key]
                    }
                    if let position {
                        guard !taken[position] else { return nil }
                        taken[position] = true
                        let unchanged =
                            outline != nil ? asBefore : Self.same(bytes, member.bytes, earlierBytes, earlier[position].bytes)
                        comparison.matches.append(Match(earlier: position, unchanged: unchanged))
                        expected = position + 1
                    } else {
                        guard newKeys.insert(member.key).inserted else { return nil }
                        comparison.matches.append(Match(earlier: nil, unchanged: false))
                    }
                    comparison.members.append(member)
                }
                guard try endOfMember() else { return comparison }
            }
        }

        /// The earlier members from `first` on that follow one another unchanged from `position`,
        /// appended to `comparison` as matches, leaving `position` after the last; returns the
        /// index after the last, or `nil` (with `position` unmoved) when `first` differs.
        ///
        /// A document another program rewrote with one entry changed is the same bytes as before
        /// up to that entry and from the entry after it: the bytes are compared as one span, and
        /// each member inside it costs only its new position, not a comparison of its own.
        mutating func recognizeRun(
            from first: Int, of earlier: [Member], in earlierBytes: UnsafeBufferPointer<UInt8>, taken: [Bool],
            into comparison: inout Comparison
        ) -> Int? {
            let earlierStart = earlier[first].start
            let common = JSONOutline.commonLength(
                bytes.baseAddress! + position, earlierBytes.baseAddress! + earlierStart,
                min(end - position, earlierBytes.count - earlierStart))
            let shift = position - earlierStart
            var next = first
            while next < earlier.count, !taken[next], earlier[next].value.upperBound - earlierStart <= common {
                next += 1
            }
            // The last member of the run must end where the earlier one did: a number or a
            // literal could go on past the common bytes.
            while next > first {
                let after = earlier[next - 1].value.upperBound + shift
                if after >= end || Self.ends(bytes[after]) || after - position < common { break }
                switch earlierBytes[earlier[next - 1].value.upperBound - 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "}"), UInt8(ascii: "]"): break
                default:
                    next -= 1
                    continue
                }
                break
            }
            guard next > first else { return nil }
            for index in first..<next {
                let member = earlier[index]
                comparison.members.append(
                    Member(
                        key: member.key, start: member.start + shift,
                        value: (member.value.lowerBound + shift)..<(member.value.upperBound + shift)))
                comparison.matches.append(Match(earlier: index, unchanged: true))
            }
            position = earlier[next - 1].value.upperBound + shift
            return next
        }

        /// `earlier` moved to `position`, when the bytes there are its bytes, leaving `position`
        /// after them; else `nil`, with `position` unmoved.
        mutating func recognize(_ earlier: Member, in earlierBytes: UnsafeBufferPointer<UInt8>) -> Member? {
            let length = earlier.bytes.count
            guard position + length <= end,
                Self.same(bytes, position..<(position + length), earlierBytes, earlier.bytes)
            else { return nil }
            // A number or a literal could go on where the earlier one ended.
            let after = position + length
            if after < end, !Self.ends(bytes[after]) {
                switch earlierBytes[earlier.value.upperBound - 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "}"), UInt8(ascii: "]"): break
                default: return nil
                }
            }
            let shift = position - earlier.start
            defer { position = after }
            return Member(
                key: earlier.key, start: position,
                value: (earlier.value.lowerBound + shift)..<(earlier.value.upperBound + shift))
        }

        /// Whether `range` of `bytes` holds the bytes `otherRange` of `other` holds.
        static func same(
            _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ other: UnsafeBufferPointer<UInt8>,
            _ otherRange: Range<Int>
        ) -> Bool {
            range.count == otherRange.count
                && (range.isEmpty
                    || memcmp(bytes.baseAddress! + range.lowerBound, other.baseAddress! + otherRange.lowerBound, range.count) == 0)
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
                    guard closers.count + depth <= Self.maximumDepth else { throw failure("values nest too deeply") }
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
