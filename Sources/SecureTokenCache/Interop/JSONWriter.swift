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

    private static func write(_ value: JSONValue, style: Style, level: Int, into output: inout [UInt8]) {
        switch value {
        case .string(let text): writeString(text, style: style, into: &output)
        case .number(let literal):
            output.append(contentsOf: (style == .python ? pythonNumber(literal) : literal).utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .null: output.append(contentsOf: "null".utf8)
        case .array(let elements):
            writeContainer(elements, brackets: ("[", "]"), style: style, level: level, into: &output) { element, output in
                write(element, style: style, level: level + 1, into: &output)
            }
        case .object(let object):
            writeContainer(object.members, brackets: ("{", "}"), style: style, level: level, into: &output) { member, output in
                writeString(member.key, style: style, into: &output)
                output.append(UInt8(ascii: ":"))
                if style.indentWidth != nil { output.append(UInt8(ascii: " ")) }
                write(member.value, style: style, level: level + 1, into: &output)
            }
        }
    }

    /// Writes the brackets around `elements`, each element on its own line when the style
    /// indents, separated by commas.
    private static func writeContainer<Elements: Collection>(
        _ elements: Elements,
        brackets: (open: Unicode.Scalar, close: Unicode.Scalar),
        style: Style,
        level: Int,
        into output: inout [UInt8],
        element writeElement: (Elements.Element, inout [UInt8]) -> Void
    ) {
        output.append(UInt8(ascii: brackets.open))
        guard !elements.isEmpty else {
            output.append(UInt8(ascii: brackets.close))
            return
        }
        var first = true
        for element in elements {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            newline(level + 1, style: style, into: &output)
            writeElement(element, &output)
        }
        newline(level, style: style, into: &output)
        output.append(UInt8(ascii: brackets.close))
    }

    private static func newline(_ level: Int, style: Style, into output: inout [UInt8]) {
        guard let width = style.indentWidth else { return }
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: level * width))
    }

    private static func writeString(_ text: String, style: Style, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        let python = style.escapesLikePython
        // Almost every key and value of a token cache (ids, hosts, scopes, tokens) needs no
        // escape: copy those whole, and take the others apart only when they need it.
        var text = text
        let plain = text.withUTF8 { bytes in
            bytes.allSatisfy { $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C && (!python || $0 < 0x7F) }
        }
        if plain {
            text.withUTF8 { output.append(contentsOf: $0) }
        } else if python {
            // CPython escapes by UTF-16 unit, so a character above U+FFFF becomes a surrogate pair.
            for unit in text.utf16 { appendEscaped(unit, python: true, into: &output) }
        } else {
            for byte in text.utf8 { appendEscaped(UInt16(byte), python: false, into: &output) }
        }
        output.append(UInt8(ascii: "\""))
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
