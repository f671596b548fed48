/// Writes JSON exactly as CPython's `json.dumps(value, indent=4)` does, the form of
/// msal-python's `SerializableTokenCache.serialize()`.
///
/// That means: four-space indentation, `", "`-free item separators (`","` then a newline),
/// `": "` between a name and its value, every character outside printable ASCII escaped as
/// `\uXXXX` (lower-case hex, surrogate pairs above U+FFFF), numbers as Python prints them
/// (integers verbatim, floats as `repr(float)`), and no trailing newline.
enum PythonJSONWriter {
    /// The bytes `json.dumps(value, indent=4)` would produce.
    static func serialize(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(4096)
        write(value, level: 0, into: &output)
        return output
    }

    static func write(_ value: JSONValue, level: Int, into output: inout [UInt8]) {
        switch value {
        case .string(let text): writeString(text, into: &output)
        case .number(let literal): output.append(contentsOf: pythonNumber(literal).utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .null: output.append(contentsOf: "null".utf8)
        case .array(let elements):
            guard !elements.isEmpty else {
                output.append(contentsOf: "[]".utf8)
                return
            }
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                newline(level + 1, into: &output)
                write(element, level: level + 1, into: &output)
            }
            newline(level, into: &output)
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            writeObject(object.members.lazy.map { ($0.key, $0.value) }, count: object.count, level: level, into: &output)
        }
    }

    /// Writes an object from any ordered sequence of members (the exporter streams sections).
    static func writeObject(
        _ members: some Sequence<(String, JSONValue)>,
        count: Int,
        level: Int,
        into output: inout [UInt8]
    ) {
        guard count > 0 else {
            output.append(contentsOf: "{}".utf8)
            return
        }
        output.append(UInt8(ascii: "{"))
        var first = true
        for (key, value) in members {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            newline(level + 1, into: &output)
            writeString(key, into: &output)
            output.append(contentsOf: ": ".utf8)
            write(value, level: level + 1, into: &output)
        }
        newline(level, into: &output)
        output.append(UInt8(ascii: "}"))
    }

    static func newline(_ level: Int, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: level * 4))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    static func writeString(_ text: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        // Printable ASCII without a quote or backslash (every key, id, scope and most secrets) is
        // written as is: the same bytes the loop below writes, without walking UTF-16 units
        // (that walk was a fifth of every write and of every import; Benchmarks/results).
        var text = text
        let copied = text.withUTF8 { bytes in
            guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }) else { return false }
            output.append(contentsOf: bytes)
            return true
        }
        if copied {
            output.append(UInt8(ascii: "\""))
            return
        }
        for unit in text.utf16 {
            switch unit {
            case 0x22: output.append(contentsOf: "\\\"".utf8)
            case 0x5C: output.append(contentsOf: "\\\\".utf8)
            case 0x0A: output.append(contentsOf: "\\n".utf8)
            case 0x0D: output.append(contentsOf: "\\r".utf8)
            case 0x09: output.append(contentsOf: "\\t".utf8)
            case 0x08: output.append(contentsOf: "\\b".utf8)
            case 0x0C: output.append(contentsOf: "\\f".utf8)
            case 0x20...0x7E: output.append(UInt8(unit))
            default:
                output.append(contentsOf: "\\u".utf8)
                output.append(hexDigits[Int(unit >> 12) & 0xF])
                output.append(hexDigits[Int(unit >> 8) & 0xF])
                output.append(hexDigits[Int(unit >> 4) & 0xF])
                output.append(hexDigits[Int(unit) & 0xF])
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// How Python prints the number `json.loads` read from `literal`: integers as `int`,
    /// everything with a fraction or exponent as `repr(float)`.
    static func pythonNumber(_ literal: String) -> String {
        let isInteger = !literal.contains(where: { $0 == "." || $0 == "e" || $0 == "E" })
        if isInteger {
            // int("-0") == 0; other integers print as written (JSON forbids leading zeros).
            return literal == "-0" ? "0" : literal
        }
        guard let value = Double(literal) else { return literal }
        return pythonRepr(value)
    }

    /// `repr(float)` of CPython: shortest round-trip digits, fixed notation for decimal
    /// exponents in -4..<16, otherwise `d.ddde+XX`.
    static func pythonRepr(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        if value == 0 { return value.sign == .minus ? "-0.0" : "0.0" }
        // Swift's description also gives the shortest round-trip digits; take them apart.
        let negative = value < 0
        let swiftText = abs(value).description
        var mantissa = Substring(swiftText)
        var exponent = 0
        if let e = swiftText.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = swiftText[..<e]
            exponent = Int(swiftText[swiftText.index(after: e)...]) ?? 0
        }
        var digits = ""
        var pointPosition = 0
        if let dot = mantissa.firstIndex(of: ".") {
            let whole = mantissa[..<dot]
            let fraction = mantissa[mantissa.index(after: dot)...]
            digits = String(whole) + fraction
            pointPosition = whole.count
        } else {
            digits = String(mantissa)
            pointPosition = digits.count
        }
        // Normalise: strip leading zeros (moving the point) and trailing zeros.
        while digits.count > 1, digits.first == "0" {
            digits.removeFirst()
            pointPosition -= 1
        }
        while digits.count > 1, digits.last == "0" { digits.removeLast() }
        let decimalPoint = pointPosition + exponent  // value = 0.digits * 10^decimalPoint
        let scientificExponent = decimalPoint - 1
        var text: String
        if scientificExponent >= -4 && scientificExponent < 16 {
            if decimalPoint <= 0 {
                text = "0." + String(repeating: "0", count: -decimalPoint) + digits
            } else if decimalPoint >= digits.count {
                text = digits + String(repeating: "0", count: decimalPoint - digits.count) + ".0"
            } else {
                let split = digits.index(digits.startIndex, offsetBy: decimalPoint)
                text = digits[..<split] + "." + digits[split...]
            }
        } else {
            let first = digits.prefix(1)
            let rest = digits.dropFirst()
            let magnitude = abs(scientificExponent)
            let exponentText = (scientificExponent < 0 ? "-" : "+") + (magnitude < 10 ? "0" : "") + String(magnitude)
            text = first + (rest.isEmpty ? "" : "." + rest) + "e" + exponentText
        }
        return negative ? "-" + text : text
    }
}
