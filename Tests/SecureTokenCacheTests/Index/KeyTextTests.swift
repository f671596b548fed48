import Testing

@testable import SecureTokenCache

/// An imported entry filed under the key MSAL derives from its members holds that key as its
/// payload (`KeyText`); the key reads, compares, hashes and exports exactly as the string it came as.
@Suite(.timeLimit(.minutes(1))) struct KeyTextTests {
    /// Entries of each kind, under the keys msal-python gives them, and entries under other keys.
    static let document = """
        {"AccessToken": {
          "u.t-login.microsoftonline.com-accesstoken-c-t-user.read openid": {"credential_type": "AccessToken",
            "secret": "a", "home_account_id": "U.T", "environment": "login.microsoftonline.com",
            "client_id": "c", "target": "User.Read openid", "realm": "t", "token_type": "Bearer",
            "cached_at": "1", "expires_on": "2", "extended_expires_on": "2"},
          "Some-Other-Shape": {"credential_type": "AccessToken", "secret": "b", "home_account_id": "u.t",
            "environment": "login.microsoftonline.com", "client_id": "c", "target": "x", "realm": "t"},
          "u.t-login.microsoftonline.com-accesstoken-c-t-x-assertionhash": {"credential_type": "AccessToken",
            "secret": "c", "home_account_id": "u.t", "environment": "login.microsoftonline.com",
            "client_id": "c", "target": "x", "realm": "t"}},
         "RefreshToken": {"u.t-login.microsoftonline.com-refreshtoken-c--": {"credential_type": "RefreshToken",
            "secret": "r", "home_account_id": "u.t", "environment": "login.microsoftonline.com", "client_id": "c"}},
         "IdToken": {"u.t-login.microsoftonline.com-idtoken-c-t-": {"credential_type": "IdToken", "secret": "e30.e30.",
            "home_account_id": "u.t", "environment": "login.microsoftonline.com", "realm": "t", "client_id": "c"}},
         "Account": {"u.t-login.microsoftonline.com-t": {"home_account_id": "u.t",
            "environment": "login.microsoftonline.com", "realm": "t", "local_account_id": "u",
            "username": "user@contoso.com", "authority_type": "MSSTS"},
          "u.\\u0074-login.microsoftonline.com-t2": {"home_account_id": "u.t",
            "environment": "login.microsoftonline.com", "realm": "t2", "local_account_id": "u",
            "username": "user@contoso.com", "authority_type": "MSSTS"}},
         "AppMetadata": {"appmetadata-login.microsoftonline.com-c": {"client_id": "c",
            "environment": "login.microsoftonline.com"}}}
        """

    /// The keys held as payloads: MSAL's own shapes, one spelled with an escape.
    static let derivedKeys: Set = [
        "u.t-login.microsoftonline.com-accesstoken-c-t-user.read openid",
        "u.t-login.microsoftonline.com-refreshtoken-c--",
        "u.t-login.microsoftonline.com-idtoken-c-t-",
        "u.t-login.microsoftonline.com-t",
        "u.t-login.microsoftonline.com-t2",
    ]

    @Test func anImportHoldsMSALsOwnKeysAsPayloadsAndEveryOtherKeyAsItCame() throws {
        let records = try MSALDocument.read(Array(Self.document.utf8)).entries
        #expect(records.count == 8)
        for record in records {
            let name = record.id.name
            #expect(record.id.nameText.isDerived == Self.derivedKeys.contains(name), "\(name)")
            // Either form equals, and hashes as, the same name held as a string.
            let asString = RecordID(kind: record.id.kind, name: name)
            #expect(record.id == asString)
            #expect(record.id.hashValue == asString.hashValue)
            #expect(record.id.nameText.stringHash == StringHash.hash(name))
        }
        #expect(Set(records.map(\.id.name)).isSuperset(of: Self.derivedKeys))
        #expect(records.contains { $0.id.name == "Some-Other-Shape" && !$0.id.nameText.isDerived })
    }

    @Test func anEntryFiledUnderAPayloadKeyIsFoundByTheKeysString() throws {
        let group = try Fixtures.group()
        try group.importMSAL(Array(Self.document.utf8))
        let index = try group.index()
        for key in Self.derivedKeys {
            let kind: CredentialKind =
                key.contains("accesstoken")
                ? .accessToken
                : key.contains("refreshtoken") ? .refreshToken : key.contains("idtoken") ? .idToken : .account
            let id = EntryID(kind: kind, key: key)
            let stored = try #require(index[id], "\(key)")
            #expect(stored.id == id)
            #expect(stored.id.keyText.isDerived)
            #expect(stored.id.keyHash == id.keyHash)
        }
        #expect(index[EntryID(kind: .accessToken, key: "some-other-shape")] == nil)
        #expect(index[EntryID(kind: .accessToken, key: "Some-Other-Shape")] != nil)
    }

    @Test func anExportWritesPayloadKeysAsTheyWereRead() throws {
        let group = try Fixtures.group()
        try group.importMSAL(Array(Self.document.utf8))
        let exported = try JSONParser.parse(try group.exportMSAL(includeSecrets: true))
        let original = try JSONParser.parse(Array(Self.document.utf8))
        #expect(exported == original)
    }

    @Test func aFileGroupSealsPayloadKeysAsTheirText() throws {
        // The names sealed into the file are the keys' text: a group opened from the file,
        // which reads them as strings, files every entry under the key it was imported under.
        let root = TemporaryDirectory()
        let written = try CacheGroup(
            name: "keys", store: FileStore(group: "keys", keyProvider: testPassphrase(), root: root.path), clock: { 1 })
        try written.importMSAL(Array(Self.document.utf8))
        let opened = try CacheGroup(
            name: "keys", store: FileStore(group: "keys", keyProvider: testPassphrase(), root: root.path), clock: { 1 })
        #expect(try opened.exportMSAL(includeSecrets: true) == written.exportMSAL(includeSecrets: true))
        let index = try opened.index()
        for key in Self.derivedKeys where key.contains("accesstoken") {
            #expect(index[EntryID(kind: .accessToken, key: key)] != nil)
        }
    }

    @Test func keysHeldAsTwoPayloadsCompareAsTheirText() throws {
        // Each key is read from a document of its own, so no two are held by the same payload.
        func key(_ key: String, home: String, environment: String = "login.microsoftonline.com", target: String = "x") throws
            -> KeyText
        {
            let document = """
                {"AccessToken": {"\(key)": {"credential_type": "AccessToken", "secret": "s", "home_account_id": "\(home)",
                  "environment": "\(environment)", "client_id": "c", "target": "\(target)", "realm": "t"}}}
                """
            let text = try #require(try MSALDocument.read(Array(document.utf8)).entries.first?.id.nameText)
            #expect(text.isDerived, "\(key)")
            return text
        }
        let name = "u.t-login.microsoftonline.com-accesstoken-c-t-x"
        let same = try key(name, home: "u.t")
        // The same members: equal without making either key.
        #expect(try same == key(name, home: "u.t"))
        // A member that differs in case only, and members split at another dash: the same key.
        #expect(try same == key(name, home: "U.T"))
        let split = "a-b-c-accesstoken-c-t-x"
        #expect(try key(split, home: "a-b", environment: "c") == key(split, home: "a", environment: "b-c"))
        // Another target, another key, and neither equals a string of the other.
        let otherName = "u.t-login.microsoftonline.com-accesstoken-c-t-y"
        let other = try key(otherName, home: "u.t", target: "y")
        #expect(!(same == other))
        #expect(!(same == KeyText(otherName)))
        #expect(other == KeyText(otherName))
    }

    /// Entries whose key is made from their payload when they are held as one, and made member
    /// by member otherwise (another part, a member that is not a string).
    static let keyedEntries: [(CredentialKind, JSONObject)] = {
        let user: JSONObject = [
            "home_account_id": .string("U-1.T"), "environment": .string("Login.MicrosoftOnline.com"),
            "client_id": .string("C-1"), "realm": .string("T"), "target": .string("User.Read Mail-Send"),
        ]
        func with(_ extra: JSONObject, without: [String] = []) -> JSONObject {
            var fields = user
            for (name, value) in extra.members { fields[name] = value }
            for name in without { fields[name] = nil }
            return fields
        }
        return [
            (.accessToken, with(["credential_type": .string("AccessToken"), "secret": .string("a")])),
            (.accessToken, with(["credential_type": .string("AccessToken")], without: ["realm", "target"])),
            (.accessToken, with(["credential_type": .string("AccessToken"), "ext_cache_key": .string("e")])),
            (.accessToken, with(["credential_type": .string("AccessToken"), "user_assertion_hash": .string("h")])),
            (.accessToken, with(["credential_type": .string("AccessToken"), "client_id": .number("12")])),
            (.refreshToken, with(["credential_type": .string("RefreshToken"), "family_id": .string("1")])),
            (.refreshToken, with(["credential_type": .string("RefreshToken"), "user_assertion_hash": .string("h")])),
            (.idToken, with(["credential_type": .string("IdToken"), "secret": .string("e30.e30.")])),
            (.account, with(["username": .string("u@contoso.com")], without: ["client_id", "target"])),
            (.account, with(["home_account_id": .null])),
        ]
    }()

    /// The payload of `fields`, as a record stores them (known members by code).
    static func payload(of fields: JSONObject) -> [UInt8] {
        let codes = fields.members.map { KnownField(name: $0.key)?.rawValue ?? 0 }
        return EntryPayload.encode(ordinal: 1, members: fields.members, codes: codes)
    }

    @Test(arguments: keyedEntries.indices) func anEntryHeldAsAPayloadHasTheKeyItHasAsAnObject(_ number: Int) throws {
        let (kind, fields) = Self.keyedEntries[number]
        let object = CacheEntry(kind: kind, fields: fields)
        let held = CacheEntry(kind: kind, members: .payload(Self.payload(of: fields)[...]), parts: EntryParts(fields))
        #expect(held.msalKey == object.msalKey)
        #expect(object.msalKey == object.msalKey.lowercased())
    }

    @Test func aPayloadDerivesExactlyItsOwnKeysBytes() throws {
        let (kind, fields) = Self.keyedEntries[0]
        let payload = Self.payload(of: fields)
        let key = "u-1.t-login.microsoftonline.com-accesstoken-c-1-t-user.read mail-send"
        func derives(_ key: String) -> Bool {
            payload.withUnsafeBytes { payload in
                Array(key.utf8).withUnsafeBytes { KeyText.derives(kind, payload: payload, key: $0) }
            }
        }
        #expect(CacheEntry(kind: kind, fields: fields).msalKey == key)
        #expect(derives(key))
        #expect(!derives(key.uppercased()))
        #expect(!derives("U" + key.dropFirst()))
        #expect(!derives(String(key.dropLast())))
        #expect(!derives(key + "d"))
        #expect(!derives(key + "-"))
        #expect(!derives(key.replacing("-accesstoken-", with: "_accesstoken-")))
        #expect(!derives(key.replacing("mail-send", with: "mail-sent")))
        #expect(!derives(""))
    }

    @Test func aPayloadDerivesTheKeyItMakesWhateverTheMembersCaseAndLength() throws {
        // Whatever form the check takes (making the key, or comparing members where they lie,
        // a word at a time): members of every length around a word, in either case, with letters
        // past ASCII (left as they are) and bytes either side of the letters (`@`, `[`, `` ` ``, `{`).
        let alphabet = Array("aZ@[`{9-.é".unicodeScalars)
        var generator = SystemRandomNumberGenerator()
        for length in 0...19 {
            var text = ""
            for _ in 0..<length { text.unicodeScalars.append(alphabet.randomElement(using: &generator)!) }
            var fields = Self.keyedEntries[0].1
            fields["realm"] = .string("T" + text)
            fields["target"] = .string(text + "Read")
            let payload = Self.payload(of: fields)
            let made = try #require(KeyText.derivedString(.accessToken, payload: payload[...]))
            func derives(_ key: String) -> Bool {
                payload.withUnsafeBytes { payload in
                    Array(key.utf8).withUnsafeBytes { KeyText.derives(.accessToken, payload: payload, key: $0) }
                }
            }
            #expect(derives(made), "\(made)")
            var bytes = Array(made.utf8)
            for position in bytes.indices where bytes[position] >= UInt8(ascii: "a") && bytes[position] <= UInt8(ascii: "z") {
                bytes[position] -= 0x20
                #expect(!derives(String(decoding: bytes, as: UTF8.self)), "\(made) with byte \(position) upper-cased")
                bytes[position] += 0x20
            }
        }
    }

    @Test func keysThatDifferOnlyInUnicodeNormalisationAreTwoKeys() throws {
        // MSAL compares keys as JSON does, byte for byte: "é" written precomposed and "e" with a
        // combining accent are two keys, though `String`'s `==` calls them equal.
        let composed = "u.t-login.microsoftonline.com-accesstoken-c-t-caf\u{E9}"
        let decomposed = "u.t-login.microsoftonline.com-accesstoken-c-t-cafe\u{301}"
        #expect(composed == decomposed, "the premise: String's == is canonical equivalence")
        #expect(!(KeyText(composed) == KeyText(decomposed)))
        #expect(RecordID(kind: .accessToken, name: composed) != RecordID(kind: .accessToken, name: decomposed))
        #expect(EntryID(kind: .accessToken, key: composed) != EntryID(kind: .accessToken, key: decomposed))
        #expect(Set([RecordID(kind: .accessToken, name: composed), RecordID(kind: .accessToken, name: decomposed)]).count == 2)

        func token(_ key: String, secret: String) -> String {
            """
            "\(key)": {"credential_type": "AccessToken", "secret": "\(secret)", "home_account_id": "u.t",
              "environment": "login.microsoftonline.com", "client_id": "c", "target": "x", "realm": "t"}
            """
        }
        let document = "{\"AccessToken\": {\(token(composed, secret: "one")), \(token(decomposed, secret: "two"))}}"
        let root = TemporaryDirectory()
        let written = try CacheGroup(
            name: "keys", store: FileStore(group: "keys", keyProvider: testPassphrase(), root: root.path), clock: { 1 })
        try written.importMSAL(Array(document.utf8))
        let opened = try CacheGroup(
            name: "keys", store: FileStore(group: "keys", keyProvider: testPassphrase(), root: root.path), clock: { 1 })
        for group in [written, opened] {
            let exported = try JSONParser.parse(try group.exportMSAL(includeSecrets: true))
            #expect(exported == (try JSONParser.parse(Array(document.utf8))))
            let index = try group.index()
            #expect(index[EntryID(kind: .accessToken, key: composed)]?.id.key.utf8.elementsEqual(composed.utf8) == true)
            #expect(index[EntryID(kind: .accessToken, key: decomposed)]?.id.key.utf8.elementsEqual(decomposed.utf8) == true)
        }
    }
}
