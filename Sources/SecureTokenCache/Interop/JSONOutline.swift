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
    /// One member: where its key and its value are.
    ///
    /// A member holds no string of its own: an outline of thousands of entries is then one block
    /// of plain numbers, which a reader copies, moves and drops without touching each entry. The
    /// key is read from the document's bytes when it is needed (``name(in:)``).
    struct Member {
        /// Where the key's characters are, between its quotes.
        var key: Range<Int>
        /// Where its value's bytes are.
        var value: Range<Int>
        /// Whether the key is plain ASCII without escapes (every MSAL key), so that its bytes
        /// are its characters.
        var plainKey: Bool

        /// Where the member starts: its key's opening quote.
        var start: Int { key.lowerBound - 1 }
        /// The member's bytes, from its key to the end of its value.
        var bytes: Range<Int> { start..<value.upperBound }

        /// The member with its bytes `shift` bytes further into the document.
        func moved(by shift: Int) -> Member {
            Member(
                key: (key.lowerBound + shift)..<(key.upperBound + shift),
                value: (value.lowerBound + shift)..<(value.upperBound + shift), plainKey: plainKey)
        }

        /// The key, read from `bytes`, the document the member was outlined in.
        func name(in bytes: UnsafeBufferPointer<UInt8>) -> String {
            if plainKey { return String(decoding: UnsafeBufferPointer(rebasing: bytes[key]), as: UTF8.self) }
            // The scan that found the key parsed it, so this parse does not fail; the bytes as
            // they are keep the function total all the same.
            let quoted = UnsafeBufferPointer(rebasing: bytes[start..<(key.upperBound + 1)])
            guard case .string(let name)? = try? JSONParser.parse(quoted) else {
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[key]), as: UTF8.self)
            }
            return name
        }

        /// The key, read from `bytes`, the document the member was outlined in.
        func name(in bytes: [UInt8]) -> String { bytes.withUnsafeBufferPointer { name(in: $0) } }

        /// Whether the member's key, in `bytes`, is `other`'s, in `otherBytes`.
        func hasKey(of other: Member, in bytes: UnsafeBufferPointer<UInt8>, _ otherBytes: UnsafeBufferPointer<UInt8>) -> Bool {
            guard plainKey, other.plainKey else { return name(in: bytes) == other.name(in: otherBytes) }
            return key.count == other.key.count
                && memcmp(bytes.baseAddress! + key.lowerBound, otherBytes.baseAddress! + other.key.lowerBound, key.count) == 0
        }
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
        for (position, member) in earlier.enumerated() { positions[member.name(in: earlierBytes)] = position }
        let matches = members.map { member in
            let position = positions[member.name(in: bytes)]
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
            let name = member.name(in: bytes)
            if let existing = position[name] {
                _ = try JSONParser.parse(UnsafeBufferPointer(rebasing: bytes[unique[existing].value]))
                unique[existing].value = member.value
            } else {
                position[name] = unique.count
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
            let key = try self.key()
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "':' after a key")
            skipWhitespace()
            let valueStart = position
            var member = Member(key: key.range, value: valueStart..<valueStart, plainKey: key.plain)
            var outline: Comparison?
            var asBefore = false
            if let earlierBytes, peek() == UInt8(ascii: "{"), let inner, let earlier = inner(member.name(in: bytes)) {
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
            member.value = valueStart..<position
            return (member, outline, asBefore)
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
            // The earlier members whose values `inner` outlines: each is compared entry by entry
            // there, never first as part of a run, where a changed one would be compared twice up
            // to its change.
            let outlined = inner.map { inner in earlier.map { inner($0.name(in: earlierBytes)) != nil } }
            var expected = 0
            while true {
                skipWhitespace()
                if expected < earlier.count, !taken[expected], outlined?[expected] != true,
                    let run = recognizeRun(
                        from: expected, of: earlier, in: earlierBytes, taken: taken, outlined: outlined, into: &comparison)
                {
                    for index in expected..<run { taken[index] = true }
                    expected = run
                } else {
                    let (member, outline, asBefore) = try member(inner: inner, in: earlierBytes)
                    if let outline { comparison.inner[comparison.members.count] = outline }
                    var position: Int?
                    if expected < earlier.count, member.hasKey(of: earlier[expected], in: bytes, earlierBytes) {
                        position = expected
                    } else if !earlier.isEmpty {
                        if positions == nil {
                            positions = Dictionary(
                                earlier.enumerated().map { ($1.name(in: earlierBytes), $0) },
                                uniquingKeysWith: { first, _ in first })
                        }
                        position = positions![member.name(in: bytes)]
                    }
                    if let position {
                        guard !taken[position] else { return nil }
                        taken[position] = true
                        let unchanged =
                            outline != nil ? asBefore : Self.same(bytes, member.bytes, earlierBytes, earlier[position].bytes)
                        comparison.matches.append(Match(earlier: position, unchanged: unchanged))
                        expected = position + 1
                    } else {
                        guard newKeys.insert(member.name(in: bytes)).inserted else { return nil }
                        comparison.matches.append(Match(earlier: nil, unchanged: false))
                    }
                    comparison.members.append(member)
                }
                guard try endOfMember() else { return comparison }
            }
        }

        /// The earlier members from `first` on that follow one another unchanged from `position`,
        /// up to the first one `taken` or `outlined`, appended to `comparison` as matches, leaving
        /// `position` after the last; returns the index after the last, or `nil` (with `position`
        /// unmoved) when `first` differs.
        ///
        /// A document another program rewrote with one entry changed is the same bytes as before
        /// up to that entry and from the entry after it: the bytes are compared as one span, and
        /// each member inside it costs only its new position, not a comparison of its own. The
        /// span ends with the members that may be in the run: bytes past them are compared where
        /// they are matched, once.
        mutating func recognizeRun(
            from first: Int, of earlier: [Member], in earlierBytes: UnsafeBufferPointer<UInt8>, taken: [Bool],
            outlined: [Bool]?, into comparison: inout Comparison
        ) -> Int? {
            var last = first
            while last < earlier.count, !taken[last], outlined?[last] != true { last += 1 }
            let earlierStart = earlier[first].start
            let common = JSONOutline.commonLength(
                bytes.baseAddress! + position, earlierBytes.baseAddress! + earlierStart,
                min(end - position, earlier[last - 1].value.upperBound - earlierStart))
            let shift = position - earlierStart
            var next = first
            while next < last, earlier[next].value.upperBound - earlierStart <= common { next += 1 }
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
                comparison.members.append(earlier[index].moved(by: shift))
                comparison.matches.append(Match(earlier: index, unchanged: true))
            }
            position = earlier[next - 1].value.upperBound + shift
            return next
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

        /// Where the key at `position` (its opening quote) has its characters, and whether they
        /// are plain ASCII without escapes (every MSAL key); any other key is checked by
        /// ``JSONParser`` (escapes and UTF-8). Leaves `position` after the closing quote.
        mutating func key() throws -> (range: Range<Int>, plain: Bool) {
            let start = position
            try skipString()
            let range = (start + 1)..<(position - 1)
            if !bytes[range].contains(where: { $0 == UInt8(ascii: "\\") || $0 >= 0x80 }) { return (range, true) }
            guard case .string = try JSONParser.parse(UnsafeBufferPointer(rebasing: bytes[start..<position])) else {
                throw failure("expected a string key")
            }
            return (range, false)
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
