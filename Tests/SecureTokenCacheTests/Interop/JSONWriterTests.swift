import Testing

@testable import SecureTokenCache

/// The three styles of the one JSON writer: msal-python's bytes, the record payloads' compact
/// form and cachetool's pretty output differ in layout, escaping and numbers, and each must stay
/// exactly as it is (exports are compared with msal-python's bytes, records are sealed in stores,
/// scripts read cachetool's output).
@Suite(.timeLimit(.minutes(1))) struct JSONWriterTests {
    /// A string that needs every kind of escape: quote, backslash, the short control escapes,
    /// other control characters, DEL, and characters beyond ASCII and beyond U+FFFF.
    static let awkward = JSONValue.string("\"\\\u{08}\u{0C}\n\u{1B}\u{7F}é😀")

    /// Nesting, empty containers and a number Python prints differently from its literal.
    static let nested: JSONValue = .object(["a": .array([.number("1.50"), .object([:])]), "b": .array([]), "c": .null])

    @Test func pythonEscapesLikeJSONDumpsWithEnsureASCII() {
        #expect(JSONWriter.text(Self.awkward, style: .python) == #""\"\\\b\f\n\u001b\u007f\u00e9\ud83d\ude00""#)
    }

    @Test func compactEscapesAsPythonDoes() {
        #expect(JSONWriter.text(Self.awkward, style: .compact) == #""\"\\\b\f\n\u001b\u007f\u00e9\ud83d\ude00""#)
    }

    @Test func prettyEscapesOnlyWhatJSONRequires() {
        #expect(JSONWriter.text(Self.awkward, style: .pretty) == "\"\\\"\\\\\\u0008\\u000c\\n\\u001b\u{7F}é😀\"")
    }

    @Test func pythonIndentsByFourAndPrintsNumbersAsPython() {
        let expected = "{\n    \"a\": [\n        1.5,\n        {}\n    ],\n    \"b\": [],\n    \"c\": null\n}"
        #expect(JSONWriter.text(Self.nested, style: .python) == expected)
    }

    @Test func compactHasNoWhitespaceAndKeepsLiterals() {
        #expect(JSONWriter.text(Self.nested, style: .compact) == #"{"a":[1.50,{}],"b":[],"c":null}"#)
    }

    @Test func prettyIndentsByTwoAndKeepsLiterals() {
        let expected = "{\n  \"a\": [\n    1.50,\n    {}\n  ],\n  \"b\": [],\n  \"c\": null\n}"
        #expect(JSONWriter.text(Self.nested, style: .pretty) == expected)
    }

    @Test(arguments: [
        ("-0", "0"), ("17", "17"), ("1e3", "1000.0"), ("1E-7", "1e-07"), ("1e16", "1e+16"), ("0.0001", "0.0001"),
        ("0.00001", "1e-05"), ("-2.50", "-2.5"), ("1e400", "Infinity"),
    ])
    func pythonPrintsNumbersAsReprOfWhatJSONLoadsRead(literal: String, printed: String) {
        #expect(JSONWriter.text(.number(literal), style: .python) == printed)
        #expect(JSONWriter.text(.number(literal), style: .compact) == literal)
    }
}
