import Testing

@testable import SecureTokenCache

/// The binary entry records (format 2): every entry decodes to exactly what it was, typed the
/// same way `init(fields:)` types it, and damage is an error, never a crash or a short entry.
@Suite(.timeLimit(.minutes(1))) struct EntryPayloadTests {
    /// Every entry of every msal-python vector, plus entries with what other SDKs write.
    private func entries() throws -> [StoredEntry] {
        var all: [StoredEntry] = []
        for name in Fixtures.vectorNames {
            let group = try Fixtures.group()
            try group.importMSAL(try Fixtures.vector(name))
            all += try group.index().documentOrder()
        }
        let foreign: JSONObject = [
            "credential_type": .string("AccessToken"), "secret": .string("sécret-\u{1F511}"),
            "home_account_id": .string("UID.UTID"), "environment": .string("Login.Windows.Net."),
            "client_id": .string("Client-ID"), "realm": .string("Contoso.onmicrosoft.com"),
            "target": .string("Mail.Read User.Read"), "cached_at": .number("1700000000"), "expires_on": .number("4.1e9"),
            "ext_expires_on": .string("4102444800"), "token_type": .string("PoP"), "key_id": .string("kid"),
            "ext_cache_key": .string("Shape"), "enrollment_id": .null,
            "ext": .object(["nested": .array([.bool(true), .number("1")])]),
            "requested_claims": .string("{\"a\":1}"), "empty": .string(""), "flag": .bool(false),
        ]
        all.append(
            StoredEntry(
                id: EntryID(kind: .accessToken, key: "foreign"), ordinal: 77, entry: .accessToken(AccessToken(fields: foreign))))
        let account: JSONObject = [
            "home_account_id": .string(""), "environment": .string("fs.contoso.com"), "realm": .string("adfs"),
            "local_account_id": .number("12"), "username": .string("Bob@Contoso.COM"), "authority_type": .string("ADFS"),
            "name": .string("Bob"), "alternative_account_id": .string("x"),
        ]
        all.append(StoredEntry(id: EntryID(kind: .account, key: "adfs"), ordinal: 78, entry: .account(Account(fields: account))))
        return all
    }

    private func decode(_ record: Record) throws -> StoredEntry {
        guard case .insert(let stored) = try RecordCodec.decode(record) else {
            Issue.record("an entry record did not decode to an entry")
            throw TokenCacheError(.storeCorrupted, "not an entry")
        }
        return stored
    }

    @Test func everyEntryDecodesToTheSameMembersAndTypedValues() throws {
        for original in try entries() {
            let record = RecordCodec.record(original)
            #expect(record.payload.first == EntryPayload.version)
            let decoded = try decode(record)
            #expect(decoded.id == original.id)
            #expect(decoded.ordinal == original.ordinal)
            #expect(decoded.entry.fields == original.entry.fields, "\(original.id.key)")
            #expect(decoded.entry == original.entry)
            // Typed the way init(fields:) types the same members, index keys included.
            let retyped = CacheEntry(kind: original.id.kind, fields: original.entry.fields)
            switch (decoded.entry, retyped) {
            case (.accessToken(let a), .accessToken(let b)):
                #expect(a.secret == b.secret && a.homeAccountId == b.homeAccountId && a.environment == b.environment)
                #expect(a.clientId == b.clientId && a.realm == b.realm && a.scopes == b.scopes && a.tokenType == b.tokenType)
                #expect(a.expiresOn == b.expiresOn && a.extendedExpiresOn == b.extendedExpiresOn && a.cachedAt == b.cachedAt)
                #expect(a.refreshOn == b.refreshOn && a.keyId == b.keyId && a.extCacheKey == b.extCacheKey)
                #expect(a.bucket == b.bucket)
            case (.refreshToken(let a), .refreshToken(let b)):
                #expect(a.secret == b.secret && a.homeAccountId == b.homeAccountId && a.clientKey == b.clientKey)
                #expect(a.familyKey == b.familyKey && a.target == b.target && a.lastModificationTime == b.lastModificationTime)
            case (.idToken(let a), .idToken(let b)):
                #expect(a.secret == b.secret && a.realm == b.realm && a.clientId == b.clientId)
            case (.account(let a), .account(let b)):
                #expect(a.homeAccountId == b.homeAccountId && a.username == b.username && a.usernameKey == b.usernameKey)
                #expect(a.localAccountId == b.localAccountId && a.realm == b.realm && a.name == b.name)
            case (.appMetadata(let a), .appMetadata(let b)):
                #expect(a.clientKey == b.clientKey && a.familyId == b.familyId)
            default:
                Issue.record("\(original.id.key) decoded to another kind")
            }
            // An entry read from a record writes the same record back without re-encoding it.
            #expect(RecordCodec.record(decoded).payload == record.payload)
        }
    }

    @Test func aRecordWhosePayloadIsASliceOfALargerBufferDecodesTheSame() throws {
        // Records opened from a batch are slices of its plaintext: nothing may index from 0.
        var records = try entries().map(RecordCodec.record)
        var state = ClientState()
        state.signIn("uid.utid")
        records += [
            RecordCodec.record(clientState: state, client: "client"),
            RecordCodec.record(signIn: .signedIn, client: "client", account: "uid.utid"),
            RecordCodec.record(tenantAlias: "contoso.onmicrosoft.com", tenantId: "tid"),
            RecordCodec.record(sections: ["AccessToken", "Account"]),
            RecordCodec.record(unknownSection: "Extra", value: .object(["a": .number("1")])),
        ]
        for record in records {
            let padded = [0xFF, 0x01, 0x02] + Array(record.payload) + [0xEE]
            let sliced = Record(id: record.id, bytes: PayloadBytes(padded, 3..<(padded.count - 1)))
            let expected = try RecordCodec.decode(record)
            let decoded = try RecordCodec.decode(sliced)
            switch (expected, decoded) {
            case (.insert(let a), .insert(let b)):
                #expect(a == b && a.entry.fields == b.entry.fields)
            case (.clientState(let c1, let s1), .clientState(let c2, let s2)):
                #expect(c1 == c2 && s1 == s2)
            case (.signIn(let c1, let a1, let s1), .signIn(let c2, let a2, let s2)):
                #expect(c1 == c2 && a1 == a2 && s1 == s2 && s1 == .signedIn)
            case (.tenantAlias(let n1, let t1), .tenantAlias(let n2, let t2)):
                #expect(n1 == n2 && t1 == t2)
            case (.sections(let a), .sections(let b)):
                #expect(a == b)
            case (.unknownSection(let n1, let v1), .unknownSection(let n2, let v2)):
                #expect(n1 == n2 && v1 == v2)
            default:
                Issue.record("\(record.id.name) decoded differently from a slice")
            }
        }
    }

    @Test func everyKnownFieldCodeFitsTheInlineParts() {
        #expect(KnownField.allCases.allSatisfy { $0.rawValue > 0 && $0.rawValue < 32 })
        #expect(Set(KnownField.allCases.map(\.name)).count == KnownField.allCases.count)
        for field in KnownField.allCases { #expect(KnownField(name: field.name) == field) }
    }

    @Test func anEntryRecordOfAnotherVersionIsAnUnsupportedFormat() throws {
        let original = try #require(try entries().first)
        var record = RecordCodec.record(original)
        for version: UInt8 in [0, 1, EntryPayload.version + 1] {
            record.payload[record.payload.startIndex] = version
            let error = #expect(throws: TokenCacheError.self) { try decode(record) }
            #expect(error?.code == .unsupportedFormat, "version \(version)")
        }
    }

    @Test func everyTruncationAndEveryBadByteIsAnErrorOrTheSameEntry() throws {
        let original = try #require(try entries().last { $0.id.kind == .accessToken })
        let record = RecordCodec.record(original)
        for length in 0..<record.payload.count {
            var cut = record
            cut.payload = record.payload.prefix(length)
            #expect(throws: TokenCacheError.self) { try decode(cut) }
        }
        // A flipped byte either fails or decodes to some entry; it never crashes. (Records are
        // sealed: a flip in a stored record fails to authenticate long before this.)
        for position in 0..<record.payload.count {
            var flipped = record
            flipped.payload[flipped.payload.startIndex + position] ^= 0x80
            do {
                _ = try decode(flipped)
            } catch let error as TokenCacheError {
                #expect([.storeCorrupted, .unsupportedFormat].contains(error.code))
            }
        }
    }

    @Test func internedStringsAreSharedAndTheirParsedFormsMadeOnce() {
        var interner = StringInterner()
        let long = Array("00000000-0000-0000-0000-000000000042.72f988bf-86f1-41af-91ab-2d7cd011db47".utf8)
        let first = long.withUnsafeBytes { interner.slot(of: $0) }
        let again = Array(long).withUnsafeBytes { interner.slot(of: $0) }
        let other = Array("00000000-0000-0000-0000-000000000043.72f988bf-86f1-41af-91ab-2d7cd011db47".utf8)
            .withUnsafeBytes { interner.slot(of: $0) }
        #expect(first == again && first != other)
        #expect(interner.string(at: first) == String(decoding: long, as: UTF8.self))
        #expect(interner.homeAccountId(at: first)?.tenantId == "72f988bf-86f1-41af-91ab-2d7cd011db47")
        // Thousands of distinct strings (table growth) each find their own slot again.
        var slots: [Int] = []
        for number in 0..<5_000 {
            slots.append(Array("value-\(number)-padding-to-be-long".utf8).withUnsafeBytes { interner.slot(of: $0) })
        }
        for number in 0..<5_000 {
            let slot = Array("value-\(number)-padding-to-be-long".utf8).withUnsafeBytes { interner.slot(of: $0) }
            #expect(slot == slots[number])
            #expect(interner.string(at: slot) == "value-\(number)-padding-to-be-long")
        }
        #expect(
            Array("".utf8).withUnsafeBytes { interner.slot(of: $0) } == Array("".utf8).withUnsafeBytes { interner.slot(of: $0) })
    }
}
