/// Writes a ``JSONValue`` as JSON text in one of three ``Style``s: the package's one JSON writer,
/// for msal-python exports, sealed record payloads and `cachetool --json`.
///
/// Every style keeps member order and writes `[]` and `{}` for empty containers. The writer is
/// package-level rather than public: cachetool shares it, but its layouts are this package's
/// formats (msal-python's bytes, the record payloads, the tool's output), not a JSON service the
/// library offers its users.
package enum JSONWriter {
    /// How a value is laid out, how strings are escaped and how numbers are written.
    package enum Style: Sendable {
        /// Exactly CPython's `json.dumps(value, indent=4)`, the form of msal-python 1.39.0's
        /// `serialize()`: four-space indentation, `","` at the end of a line, `": "` after a
        /// name, every character outside printable ASCII escaped as `\uXXXX` (lower-case hex,
        /// surrogate pairs above U+FFFF), numbers as Python prints them (integers verbatim,
        /// floats as `repr(float)`), no trailing newline.
        case python
        /// No whitespace at all, strings escaped as in ``python``, numbers as their literal text:
        /// the JSON inside sealed record payloads.
        case compact
        /// Two-space indentation, `": "` after a name, strings escaped only where JSON requires
        /// it (quote, backslash and control characters; newline, return and tab in their short
        /// form) and other text left as UTF-8, numbers as their literal text, no trailing
        /// newline: output for people and scripts.
        case pretty

        /// The spaces per nesting level; `nil` writes no line breaks at all.
        var indentWidth: Int? {
            switch self {
            case .python: 4
            case .pretty: 2
            case .compact: nil
            }
        }

        /// Whether strings are escaped as Python's `json` module does by default
        /// (`ensure_ascii`): `\b` and `\f` in their short form and everything outside printable
        /// ASCII as `\u` escapes.
        var escapesLikePython: Bool { self != .pretty }
    }

    /// `value` in `style`, as text.
    package static func text(_ value: JSONValue, style: Style) -> String {
        String(decoding: bytes(value, style: style), as: UTF8.self)
    }

    /// `value` in `style`, as UTF-8 bytes.
    static func bytes(_ value: JSONValue, style: Style) -> [UInt8] {
        var output: [UInt8] = []
        write(value, style: style, into: &output)
        return output
    }

    /// Appends `value` in `style` to `output`.
    static func write(_ value: JSONValue, style: Style, into output: inout [UInt8]) {
        write(value, style: style, level: 0, into: &output)
    }

    /// Appends `value` in `style` as the value of a member or element at nesting `level` (0 for
    /// the document): its own lines are indented one level deeper.
    static func write(_ value: JSONValue, style: Style, level: Int, into output: inout [UInt8]) {
        switch value {
        case .string(let text): writeString(text, style: style, into: &output)
        case .number(let literal):
            output.append(contentsOf: (style == .python ? pythonNumber(literal) : literal).utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .null: output.append(contentsOf: "null".utf8)
        case .array(let elements):
            var next = elements.makeIterator()
            writeContainer(count: elements.count, brackets: ("[", "]"), style: style, level: level, into: &output) { output in
                write(next.next()!, style: style, level: level + 1, into: &output)
            }
        case .object(let object):
            var next = object.members.makeIterator()
            writeContainer(count: object.count, brackets: ("{", "}"), style: style, level: level, into: &output) { output in
                let member = next.next()!
                writeName(member.key, style: style, into: &output)
                write(member.value, style: style, level: level + 1, into: &output)
            }
        }
    }

    /// Writes the brackets around `count` elements, each written in turn by `writeElement`, on
    /// its own line when the style indents, separated by commas.
    static func writeContainer(
        count: Int,
        brackets: (open: Unicode.Scalar, close: Unicode.Scalar),
        style: Style,
        level: Int,
        into output: inout [UInt8],
        element writeElement: (inout [UInt8]) -> Void
    ) {
        output.append(UInt8(ascii: brackets.open))
        guard count > 0 else {
            output.append(UInt8(ascii: brackets.close))
            return
        }
        for index in 0..<count {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            newline(level + 1, style: style, into: &output)
            writeElement(&output)
        }
        newline(level, style: style, into: &output)
        output.append(UInt8(ascii: brackets.close))
    }

    /// A member's name and what follows it, before its value.
    static func writeName(_ name: String, style: Style, into output: inout [UInt8]) {
        var name = name
        name.withUTF8 { writeName(utf8: UnsafeRawBufferPointer($0), style: style, into: &output) }
    }

    /// ``writeName(_:style:into:)`` of the name whose UTF-8 bytes are `name` (valid UTF-8);
    /// `plain` when it is printable ASCII without a quote or backslash (an MSAL member's name),
    /// which no style escapes.
    static func writeName(utf8 name: UnsafeRawBufferPointer, plain: Bool = false, style: Style, into output: inout [UInt8]) {
        if plain {
            output.append(UInt8(ascii: "\""))
            output.append(contentsOf: name)
            output.append(UInt8(ascii: "\""))
        } else {
            writeString(utf8: name, style: style, into: &output)
        }
        output.append(UInt8(ascii: ":"))
        if style.indentWidth != nil { output.append(UInt8(ascii: " ")) }
    }

    /// A line break and the indentation of `level`.
    private static func newline(_ level: Int, style: Style, into output: inout [UInt8]) {
        guard let width = style.indentWidth else { return }
        let count = 1 + level * width
        // A document nests a few levels: one copy of a line break and its spaces, not a byte at
        // a time.
        if count <= lineBreak.count {
            lineBreak.withUnsafeBufferPointer { output.append(contentsOf: UnsafeBufferPointer(rebasing: $0[..<count])) }
        } else {
            output.append(UInt8(ascii: "\n"))
            output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: level * width))
        }
    }

    /// A line break and the spaces of the deepest indentation most documents have.
    private static let lineBreak: [UInt8] = [UInt8(ascii: "\n")] + [UInt8](repeating: UInt8(ascii: " "), count: 32)

    static func writeString(_ text: String, style: Style, into output: inout [UInt8]) {
        var text = text
        text.withUTF8 { writeString(utf8: UnsafeRawBufferPointer($0), style: style, into: &output) }
    }

    /// Writes the string whose UTF-8 bytes are `bytes` (valid UTF-8).
    static func writeString(utf8 bytes: UnsafeRawBufferPointer, style: Style, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        let python = style.escapesLikePython
        // Almost every key and value of a token cache (ids, hosts, scopes, tokens) needs no
        // escape: copy those whole, and take the others apart only when they need it.
        if !needsEscape(bytes, python: python) {
            output.append(contentsOf: bytes)
        } else if python {
            // CPython escapes by UTF-16 unit, so a character above U+FFFF becomes a surrogate pair.
            for unit in String(decoding: bytes, as: UTF8.self).utf16 { appendEscaped(unit, python: true, into: &output) }
        } else {
            for byte in bytes { appendEscaped(UInt16(byte), python: false, into: &output) }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Whether a byte of `bytes` is escaped: a quote, a backslash, a control character and, with
    /// Python's escaping, DEL and every byte beyond ASCII. Eight bytes at a time (``WordBytes``).
    private static func needsEscape(_ bytes: UnsafeRawBufferPointer, python: Bool) -> Bool {
        @inline(__always) func escaped(_ word: UInt64) -> UInt64 {
            JSONParser.stops(in: word) | (python ? word & WordBytes.high | WordBytes.equal(word, 0x7F) : 0)
        }
        var found: UInt64 = 0
        var offset = 0
        while bytes.count - offset >= 8 {
            found |= escaped(bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
        }
        if offset < bytes.count {
            // The zeros past the end are no control characters.
            found |= escaped(WordBytes.load(bytes, at: offset)) & ((1 << UInt64(8 * (bytes.count - offset))) - 1)
        }
        return found != 0
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends one unit of a string: a UTF-16 unit in Python's escaping, a UTF-8 byte otherwise
    /// (the bytes of a character beyond ASCII are all above 0x7F and are copied as they are).
    private static func appendEscaped(_ unit: UInt16, python: Bool, into output: inout [UInt8]) {
        switch unit {
        case 0x22: output.append(contentsOf: "\\\"".utf8)
        case 0x5C: output.append(contentsOf: "\\\\".utf8)
        case 0x0A: output.append(contentsOf: "\\n".utf8)
        case 0x0D: output.append(contentsOf: "\\r".utf8)
        case 0x09: output.append(contentsOf: "\\t".utf8)
        case 0x08 where python: output.append(contentsOf: "\\b".utf8)
        case 0x0C where python: output.append(contentsOf: "\\f".utf8)
        case 0x20...0x7E: output.append(UInt8(unit))
        case 0x7F... where !python: output.append(UInt8(truncatingIfNeeded: unit))
        default:
            output.append(contentsOf: "\\u".utf8)
            output.append(hexDigits[Int(unit >> 12) & 0xF])
            output.append(hexDigits[Int(unit >> 8) & 0xF])
            output.append(hexDigits[Int(unit >> 4) & 0xF])
            output.append(hexDigits[Int(unit) & 0xF])
        }
    }
}
