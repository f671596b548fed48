import SecureTokenCache

/// Writes `--json` output: pretty-printed, members in the order built (the order of the human
/// output's columns), numbers as their literal text.
enum JSONWriter {
    /// `value` as indented JSON text and a final newline.
    static func render(_ value: JSONValue) -> String {
        var text = ""
        write(value, level: 0, into: &text)
        return text + "\n"
    }

    private static func write(_ value: JSONValue, level: Int, into text: inout String) {
        switch value {
        case .string(let string): quote(string, into: &text)
        case .number(let literal): text += literal
        case .bool(let flag): text += flag ? "true" : "false"
        case .null: text += "null"
        case .array(let items):
            guard !items.isEmpty else {
                text += "[]"
                return
            }
            text += "[\n"
            for (position, item) in items.enumerated() {
                text += indent(level + 1)
                write(item, level: level + 1, into: &text)
                text += position == items.count - 1 ? "\n" : ",\n"
            }
            text += indent(level) + "]"
        case .object(let object):
            guard object.count > 0 else {
                text += "{}"
                return
            }
            text += "{\n"
            for (position, member) in object.members.enumerated() {
                text += indent(level + 1)
                quote(member.key, into: &text)
                text += ": "
                write(member.value, level: level + 1, into: &text)
                text += position == object.count - 1 ? "\n" : ",\n"
            }
            text += indent(level) + "}"
        }
    }

    private static func indent(_ level: Int) -> String { String(repeating: "  ", count: level) }

    private static func quote(_ string: String, into text: inout String) {
        text += "\""
        // Most values (ids, hosts, GUIDs) need no escaping: append them whole.
        if !string.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            text += string
            text += "\""
            return
        }
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}

extension JSONValue {
    /// A string, or `null` for `nil`.
    static func optional(_ string: String?) -> JSONValue { string.map(JSONValue.string) ?? .null }

    /// A whole number.
    static func integer(_ value: some BinaryInteger) -> JSONValue { .number(String(value)) }

    /// A whole number, or `null` for `nil`.
    static func optional(_ value: Int64?) -> JSONValue { value.map { .number(String($0)) } ?? .null }
}
