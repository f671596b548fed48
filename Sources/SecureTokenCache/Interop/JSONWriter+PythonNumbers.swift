extension JSONWriter {
    /// How Python prints the number `json.loads` read from `literal`: integers as `int`,
    /// everything with a fraction or exponent as `repr(float)`; except a literal too large for a
    /// float, which stays as written.
    static func pythonNumber(_ literal: String) -> String {
        let isInteger = !literal.contains(where: { $0 == "." || $0 == "e" || $0 == "E" })
        if isInteger {
            // int("-0") == 0; other integers print as written (JSON forbids leading zeros).
            return literal == "-0" ? "0" : literal
        }
        // Python would print `Infinity`, which is not JSON: no other SDK sharing the file could
        // read it again (nor could we), and a reader that calls the file corrupt starts it afresh,
        // losing every token in it. The literal as written reads as the same float in Python.
        guard let value = Double(literal), value.isFinite else { return literal }
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
