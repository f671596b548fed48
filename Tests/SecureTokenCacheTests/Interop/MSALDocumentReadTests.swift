import Testing

@testable import SecureTokenCache

/// ``MSALDocument/read(_:)`` goes from bytes to records without a tree of the document: the same
/// records, and the same errors, as the whole parse (``MSALDocument/parse(_:)``) gives.
// Three minutes: the truncation test parses about 1,500 cuts twice, seconds alone even under
// AddressSanitizer, but CI runs that pass at nice 19 beside the main suite, where it can take
// over a minute.
@Suite(.timeLimit(.minutes(3))) struct MSALDocumentReadTests {
    /// Documents with what the direct reading must take apart as the whole parse does: escapes,
    /// characters beyond ASCII, numbers, literals, nested values, unknown members and sections,
    /// and (read by the whole parse) a repeated member or section.
    static let documents: [String] = [
        #"{}"#,
        #"{"AccessToken": {}}"#,
        #"{"AccessToken": {"k": {}}, "Account": {"a": {"home_account_id": "u.t", "username": "\u00e9l\u00e8ve@contoso.com"}}}"#,
        #"{"AccessToken": {"k\"1": {"secret": "a\nb\t\\c\/d \ud83d\ude00 \ud800 x", "expires_on": 1700000000, "cached_at": "1"}}}"#,
        #"{"AccessToken": {"k": {"ext": {"b": [1, 2.5e3, -0, true, null], "a": "é"}, "extended_expires_on": 1.5, "x": false}}}"#,
        #"{"IdToken": {"k": {"secret": "e30"}}, "IDToken": {"k": {"secret": "second"}}, "Extra": [1, {"a": "b"}]}"#,
        #"{"RefreshToken": {"k": {"secret": "1", "secret": "2", "family_id": "1"}}}"#,
        #"{"AccessToken": {"a": {"secret": "1"}}, "Account": {}, "AccessToken": {"b": {"secret": "2"}}}"#,
        #"{"AppMetadata": {"m": {"client_id": "c", "userAssertionHash": "h", "user_assertion_hash": "i", "userAssertionHash": "j"}}}"#,
        "{\"Account\":{\"a\":{\"home_account_id\":\"u.t\",\"realm\":\"t\"}}}  \n",
        Self.changingOrder,
    ]

    /// Entries of one section whose members keep the order of the entry before, then leave it:
    /// members swapped, a name that starts with the one expected, an unknown name, an expected
    /// name escaped, whitespace of every kind around names. Each entry is read expecting the
    /// previous one's order (``JSONParser/skipMemberName(_:)``), and must read as the whole
    /// parse reads it however far it follows that order.
    static let changingOrder = """
        {
            "AccessToken": {
                "a": {"secret": "1", "home_account_id": "u.t", "target": "x"},
                "b": {"secret": "2", "home_account_id": "u.t", "target": "y"},
                "c": {\t"home_account_id"\r\n: "u.t",\n\n            "secret" :"3"},
                "d": {"secrets": "4", "secret": "5", "target": "z", "x": 1},
                "e": {"secrets": "4", "secr\\u0065t": "6", "target"\t\r\n:  "w", "x": 2},
                "f": {"home_account_id": "u.t"}
            },
            "Account": {"u.t": {"home_account_id": "u.t", "realm": "t"}, "v.t": {"home_account_id": "v.t", "realm": "t"}}
        }
        """

    @Test(arguments: documents + Fixtures.vectorNames.map { try! String(decoding: Fixtures.vector($0), as: UTF8.self) })
    func readsTheRecordsTheWholeParseGives(document: String) throws {
        let bytes = Array(document.utf8)
        // Read in one pass unless a name repeats, which only the whole parse reads, and which an
        // import refuses (repeatedNamesAreRefusedWithTheirByteOffset).
        let direct = try bytes.withUnsafeBufferPointer { try MSALDocument.readDirectly($0) }
        #expect((direct == nil) == Self.repeating.contains(document))
        guard !Self.repeating.contains(document) else { return }
        let read = try MSALDocument.read(bytes)
        let parsed = MSALDocument.records(of: try MSALDocument.parse(bytes))
        #expect(read.entries.map(\.id) == parsed.entries.map(\.id))
        #expect(read.entries.map { Array($0.payload) } == parsed.entries.map { Array($0.payload) })
        #expect(read.sections.map(\.name) == parsed.sections.map(\.name))
        #expect(read.entryCount == parsed.entryCount)
    }

    /// The documents of ``documents`` where a section or an entry's member repeats.
    static let repeating = Set(documents[6...8])

    /// Each document with a repeated name, the byte offset of the name's second occurrence, the
    /// name, and what the error says repeats.
    static let repeatedNames: [(document: String, offset: Int, name: String, what: String)] = [
        (documents[6], 39, "secret", #"a member name in an entry of section "RefreshToken""#),
        (documents[7], 55, "AccessToken", "a section name"),
        (documents[8], 95, "userAssertionHash", #"a member name in an entry of section "AppMetadata""#),
        (
            #"{"AccessToken": {"a": {"secret": "1"}, "b": {}, "a": {"secret": "2"}}}"#, 48, "a",
            #"an entry's key in section "AccessToken""#
        ),
        // The second "secret" is where the entry before had it: it is matched as expected, and
        // still counted as a repeat.
        (
            #"{"AccessToken": {"a": {"target": "t", "secret": "1"}, "b": {"secret": "2", "secret": "3333333333333333333333333"}}}"#,
            75, "secret", #"a member name in an entry of section "AccessToken""#
        ),
    ]

    @Test(arguments: 0..<5) func repeatedNamesAreRefusedWithTheirByteOffset(example: Int) throws {
        let (document, offset, name, what) = Self.repeatedNames[example]
        let bytes = Array(document.utf8)
        #expect(bytes[offset...].starts(with: Array("\"\(name)\"".utf8)))
        for occupied in [false, true] {
            let group = try Fixtures.group()
            if occupied { try group.importMSAL(try Fixtures.vector("v2_two_accounts_two_tenants")) }
            let before = try group.exportMSAL(includeSecrets: true)
            let generation = group.generation
            let thrown = #expect(throws: TokenCacheError.self) { try group.importMSAL(bytes) }
            #expect(thrown?.code == .malformedCache)
            #expect(thrown?.message.contains("repeats \(what) at byte \(offset) ") == true, "\(thrown?.message ?? "")")
            #expect(try group.exportMSAL(includeSecrets: true) == before)
            #expect(group.generation == generation)
        }
    }

    @Test(arguments: [
        "", " ", "[]", "1", #"{"AccessToken": []}"#, #"{"AccessToken": {"k": 1}}"#, #"{"AccessToken": {"k": {"secret": "1}}}"#,
        #"{"AccessToken": {"k": {"secret": tru}}}"#, #"{"AccessToken": {"k": {"secret": "1"} x}"#, #"{"a": 1} x"#,
        "{\"AccessToken\": {\"k\": {\"secret\": \"a\u{01}b\"}}}", #"{"AccessToken": {"k": {"n": 01}}}"#,
        #"{"AccessToken": {"k": {"n": "\x"}}}"#,
        // An expected name with no ':' after it, far enough from the end to be compared whole.
        #"{"AccessToken": {"a": {"secret": "1"}, "b": {"secret" x "2222222222222222222222222"}}}"#,
    ])
    func refusesWhatTheWholeParseRefusesWithItsError(document: String) throws {
        let bytes = Array(document.utf8)
        let expected = #expect(throws: TokenCacheError.self) { try MSALDocument.parse(bytes) }
        let thrown = #expect(throws: TokenCacheError.self) { try MSALDocument.read(bytes) }
        #expect(thrown?.code == .malformedCache)
        #expect(thrown?.message == expected?.message)
    }

    @Test(arguments: [7, 1])
    func aDocumentTruncatedAnywhereIsRefusedAsTheWholeParseRefusesIt(step: Int) throws {
        // A vector every seven bytes, and the entries that change their members' order at
        // every byte.
        let bytes = step == 1 ? Array(Self.changingOrder.utf8) : try Fixtures.vector("v2_two_accounts_two_tenants")
        for end in stride(from: 0, to: bytes.count, by: step) {
            let cut = Array(bytes[..<end])
            let expected = #expect(throws: TokenCacheError.self) { try MSALDocument.parse(cut) }
            let thrown = #expect(throws: TokenCacheError.self) { try MSALDocument.read(cut) }
            #expect(thrown?.message == expected?.message, "cut at \(end)")
        }
    }
}
