import Dispatch
import Synchronization
import Testing

@testable import SecureTokenCache

/// Opening a group files its entries without making them typed (`EntryDecoder.filingSlots`,
/// `SlotFiling`), each typed entry made later, once, when asked for (`EntryTable`). These check
/// that an index opened that way files every entry exactly as inserting the typed entries one by
/// one does, whatever shape the members take, and that the tables underneath behave.
@Suite(.timeLimit(.minutes(1))) struct BulkFilingTests {
    /// One of `choices`, picked by `generator`.
    private static func pick<Value>(_ choices: [Value], _ generator: inout SeededGenerator) -> Value {
        choices[Int(generator.next() % UInt64(choices.count))]
    }

    /// A member value of the shapes caches hold and a few they should not: text in any case, an
    /// empty string, a number literal, or a value that is no text at all.
    private static func variant(_ text: String, _ generator: inout SeededGenerator) -> JSONValue? {
        pick(
            [
                .string(text), .string(text), .string(text), .string(text.uppercased()), .string(""), .number("4711"),
                .bool(true),
                .null, nil,
            ], &generator)
    }

    /// `count` entries of every kind with members varied as ``variant(_:_:)`` does, among few
    /// users, clouds, tenants and clients, so that entries share keys the way a real cache's do.
    private static func entries(_ count: Int, seed: UInt64) -> [StoredEntry] {
        var generator = SeededGenerator(state: seed)
        let users = (0..<8).map { "0000000\($0)-0000-0000-0000-000000000000.72f988bf-86f1-41af-91ab-2d7cd011db47" }
        let clouds = [
            "login.microsoftonline.com", "LOGIN.windows.net", "login.microsoftonline.com.", "login.chinacloudapi.cn",
            "Example.COM",
        ]
        let tenants = ["72f988bf-86f1-41af-91ab-2d7cd011db47", "Contoso.onmicrosoft.com", "common"]
        let clients = ["11111111-aaaa-4bbb-8ccc-000000000001", "22222222-AAAA-4bbb-8ccc-000000000002"]
        var entries: [StoredEntry] = []
        for number in 0..<count {
            let kind = pick(CredentialKind.allCases, &generator)
            var fields: [(key: String, value: JSONValue)] = []
            func add(_ key: String, _ value: JSONValue?) { if let value { fields.append((key, value)) } }
            add("credential_type", .string(kind.sectionName))
            add("home_account_id", variant(pick(users, &generator), &generator))
            add("environment", variant(pick(clouds, &generator), &generator))
            add("client_id", variant(pick(clients, &generator), &generator))
            add("realm", variant(pick(tenants, &generator), &generator))
            add("secret", .string("secret-\(number)"))
            switch kind {
            case .accessToken:
                add("target", .string(pick(["User.Read", "Mail.Send openid", "A B C"], &generator)))
                add("expires_on", .string("4102444800"))
                add("token_type", pick([nil, .string("Bearer"), .string("pop"), .string("POP"), .string("")], &generator))
                add("ext_cache_key", pick([nil, .string(""), .string("KeyA"), .string("keya")], &generator))
            case .refreshToken:
                add("family_id", pick([nil, .string("1"), .string(""), .number("1"), .string("F")], &generator))
            case .account:
                add("username", variant("User\(number % 5)@Contoso.com", &generator))
                add("local_account_id", .string("local-\(number)"))
            case .appMetadata:
                add("family_id", pick([nil, .string("1"), .string("")], &generator))
            case .idToken:
                break
            }
            // Members the engine does not read, plain and nested, stay in the record.
            if number % 7 == 0 { add("x_unknown", .object(["nested": .array([.number("1"), .null])])) }
            if number % 11 == 0 { add("x_flag", .bool(false)) }
            let entry = CacheEntry(kind: kind, fields: JSONObject(fields))
            entries.append(StoredEntry(id: EntryID(kind: kind, key: "key-\(number)"), ordinal: UInt64(number + 1), entry: entry))
        }
        return entries
    }

    /// The records of `entries`.
    private static func records(_ entries: [StoredEntry]) -> [Record] {
        entries.map(RecordCodec.record)
    }

    @Test(arguments: [(400, UInt64(1)), (RecordCodec.parallelDecodingThreshold + 300, UInt64(2))])
    func anOpenedIndexFilesEveryEntryAsInsertingItTypedDoes(count: Int, seed: UInt64) throws {
        let entries = Self.entries(count, seed: seed)
        let records = Self.records(entries)
        let opened = try RecordCodec.build(records)
        var inserted = Index()
        for stored in entries { inserted.insert(stored) }

        let openedMaps = opened.filingContents()
        let insertedMaps = inserted.filingContents()
        #expect(Set(openedMaps.keys) == Set(insertedMaps.keys))
        for (name, contents) in insertedMaps {
            #expect(openedMaps[name] == contents, "map \(name) differs")
        }
        #expect(opened.count == inserted.count)
        #expect(opened.countByKind.filter { $0.value > 0 } == inserted.countByKind.filter { $0.value > 0 })
        #expect(opened.nextOrdinal == inserted.nextOrdinal)
        // Entries made later from the table equal the typed ones, members and all.
        for stored in entries {
            let made = try #require(opened[stored.id])
            #expect(made.ordinal == stored.ordinal && made.entry == stored.entry, "\(stored.id.key)")
        }
        #expect(opened.documentOrder().map(\.id) == entries.map(\.id))
    }

    @Test func aDamagedPayloadFailsTheOpenEvenInAMemberTheIndexDoesNotRead() throws {
        let entries = Self.entries(60, seed: 3)
        // An id token with no extra member: its payload ends with its secret, a member filing
        // passes over: `code ‖ type ‖ length ‖ bytes`.
        let position = try #require(
            entries.indices.first { entries[$0].id.kind == .idToken && $0 % 7 != 0 && $0 % 11 != 0 })
        let secret = try #require(entries[position].entry.fields.string("secret"))
        var cutShort = Self.records(entries)
        cutShort[position].payload = cutShort[position].payload.dropLast(2)
        #expect(throws: TokenCacheError.self) { try RecordCodec.build(cutShort) }
        var unknownType = Self.records(entries)
        var bytes = Array(unknownType[position].payload)
        bytes[bytes.count - secret.utf8.count - 2] = 0xEE
        unknownType[position].payload = bytes[...]
        #expect(throws: TokenCacheError.self) { try RecordCodec.build(unknownType) }
        // Undamaged, the same records open.
        #expect(try RecordCodec.build(Self.records(entries)).count == entries.count)
    }

    @Test func threadsMakingTheSameEntriesAtOnceAllGetEqualOnes() throws {
        let entries = Self.entries(300, seed: 5)
        let rows = entries.map { stored in
            EntryTable.Row(id: stored.id, ordinal: stored.ordinal, source: .payload(PayloadBytes(EntryPayload.encode(stored))))
        }
        let table = EntryTable(rows: rows)
        let made = Mutex([[CacheEntry]](repeating: [], count: 8))
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            // Each thread walks the rows from another starting point, so they race on many.
            let order = (0..<table.count).map { (($0 + thread * 37) % table.count) }
            var seen = [CacheEntry?](repeating: nil, count: table.count)
            for row in order { seen[row] = table.entry(at: row) }
            made.withLock { $0[thread] = seen.map { $0! } }
        }
        let results = made.withLock { $0 }
        for thread in results {
            #expect(thread == entries.map(\.entry))
        }
    }

    @Test func aDecoderKeptAcrossUpdatesForgetsWhatItInternedAndStillDecodesAlike() throws {
        let entries = Self.entries(200, seed: 6)
        var kept = EntryDecoder()
        for (number, stored) in entries.enumerated() {
            // Many distinct strings, so the kept decoder forgets (and starts over) on the way.
            if number % 3 == 0 {
                var filler = EntryDecoder()
                _ = try filler.decode(kind: stored.id.kind, payload: EntryPayload.encode(stored))
            }
            kept.forgetIfLarge(limit: 16)
            let decoded = try kept.decode(kind: stored.id.kind, payload: EntryPayload.encode(stored))
            #expect(decoded.entry == stored.entry && decoded.ordinal == stored.ordinal)
        }
    }

    @Test func recordsAreCutIntoContiguousPartsOfAboutEqualWork() {
        // Sections as a compaction writes them: many access tokens, then fewer of each other kind.
        var records: [Record] = []
        for (kind, count) in [(RecordKind.accessToken, 8_000), (.account, 2_000), (.idToken, 2_000), (.refreshToken, 2_000)] {
            for number in 0..<count { records.append(Record(id: RecordID(kind: kind, name: "\(kind)-\(number)"), payload: [1])) }
        }
        for count in 1...4 {
            let parts = RecordCodec.parts(of: records, count: count)
            #expect(parts.count == count)
            #expect(parts.first?.lowerBound == 0 && parts.last?.upperBound == records.count)
            #expect(zip(parts, parts.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
        }
        // Two parts: the access tokens (cheaper each) are not cut at half the records.
        let two = RecordCodec.parts(of: records, count: 2)
        #expect(two[0].count > records.count / 2)
        #expect(two[0].count < 9_000)
    }

    @Test func aKeyTableNumbersKeysLikeADictionaryDespiteCollidingHashes() {
        var generator = SeededGenerator(state: 7)
        var table = KeyTable<CollidingKey>()
        var reference: [CollidingKey: Int] = [:]
        for _ in 0..<3_000 {
            let key = CollidingKey(Int(generator.next() % 900) - 100)
            let number = table.add(key)
            if let known = reference[key] {
                #expect(number == known)
            } else {
                #expect(number == reference.count)
                reference[key] = number
            }
        }
        #expect(table.count == reference.count)
        for value in -150..<850 {
            #expect(table.number(of: CollidingKey(value)) == reference[CollidingKey(value)], "\(value)")
        }
        #expect(table.keys.enumerated().allSatisfy { reference[$0.element] == $0.offset })
    }

    @Test func groupingsJoinedAndConvertedKeepEveryRowInOrderUnderItsKey() {
        var generator = SeededGenerator(state: 8)
        var parts: [Grouping<CollidingKey>] = []
        var reference: [Int: [UInt32]] = [:]
        var offset = 0
        for _ in 0..<4 {
            var part = Grouping<CollidingKey>()
            let rows = 200 + Int(generator.next() % 100)
            for row in 0..<rows {
                let key = Int(generator.next() % 60)
                part.add(row, to: CollidingKey(key))
                // Converted below: keys that agree modulo 20 become one.
                reference[key % 20, default: []].append(UInt32(offset + row))
            }
            parts.append(part)
            offset += rows
        }
        var joined = parts[0]
        var rowsSoFar = 0
        var counts: [Int] = []
        for part in parts {
            var rows = 0
            part.forEachKey { _, count in rows += count }
            counts.append(rows)
        }
        rowsSoFar = counts[0]
        for (index, part) in parts.enumerated().dropFirst() {
            joined.append(part, offset: rowsSoFar)
            rowsSoFar += counts[index]
        }
        let converted = joined.converted { CollidingKey($0.value % 20) }
        let table = EntryTable(rows: [])
        let map: LayeredMap<CollidingKey, Filed<EntryID>> = converted.map(of: table)
        #expect(map.count == reference.count)
        for (key, rows) in reference {
            guard case .rows(let filed)? = map[CollidingKey(key)] else {
                Issue.record("key \(key) has no rows")
                continue
            }
            #expect(Array(filed.rows) == rows && filed.table === table, "key \(key)")
        }
    }
}
