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
        ("0.00001", "1e-05"), ("-2.50", "-2.5"), ("1e-400", "0.0"),
        // Too large for a float: Python prints `Infinity`, which is not JSON.
        ("1e400", "1e400"), ("-1.5E+999", "-1.5E+999"),
    ])
    func pythonPrintsNumbersAsReprOfWhatJSONLoadsRead(literal: String, printed: String) {
        #expect(JSONWriter.text(.number(literal), style: .python) == printed)
        #expect(JSONWriter.text(.number(literal), style: .compact) == literal)
    }

    /// A member holding a number too large for a float (a field another SDK wrote) goes through
    /// a group and out again as JSON that imports again unchanged, kept in the entry's payload
    /// and in a tree of the document alike (the fuzzer's msal-json target found an export that
    /// did not).
    @Test(arguments: ["1e400", "-1.5E+999"])
    func aNumberTooLargeForAFloatExportsAsJSONThatImportsAgain(literal: String) throws {
        let document = Array(
            """
            {"AccessToken": {"k": {"credential_type": "AccessToken", "secret": "s", "extra": \(literal), \
            "nested": {"n": [\(literal)]}}}, "Other": [\(literal)]}
            """.utf8)
        let group = try CacheGroup(name: "numbers", store: MemoryStore(name: "numbers"), clock: { 1 })
        try group.importMSAL(document)
        let exported = try group.exportMSAL(includeSecrets: true)
        let again = try CacheGroup(name: "again", store: MemoryStore(name: "again"), clock: { 1 })
        try again.importMSAL(exported)
        #expect(try again.exportMSAL(includeSecrets: true) == exported)
        #expect(try JSONParser.parse(exported) == (try JSONParser.parse(document)))
    }
}
