import Testing

@testable import SecureTokenCache

/// A map key with only 13 distinct hashes, so that the tables' probing past colliding keys is
/// exercised on every test.
struct CollidingKey: PrehashedKey, ExpressibleByIntegerLiteral, Comparable, CustomStringConvertible {
    let value: Int
    init(_ value: Int) { self.value = value }
    init(integerLiteral value: Int) { self.value = value }
    var prehash: Int { value % 13 }
    var description: String { "\(value)" }
    static func < (lhs: CollidingKey, rhs: CollidingKey) -> Bool { lhs.value < rhs.value }
}

/// `LayeredMap` behaves like a dictionary with value semantics, whatever mix of bulk-built base,
/// changes, removals and folds it went through, and a copy never sees later changes.
@Suite struct LayeredMapTests {
    private func check(_ map: LayeredMap<CollidingKey, String>, equals reference: [CollidingKey: String]) {
        #expect(map.count == reference.count)
        #expect(map.isEmpty == reference.isEmpty)
        var seen: [CollidingKey: String] = [:]
        map.forEach { key, value in
            #expect(seen.updateValue(value, forKey: key) == nil, "key \(key) visited twice")
        }
        #expect(seen == reference)
        #expect(Set(map.keys) == Set(reference.keys))
        #expect(map.values.sorted() == reference.values.sorted())
        for key in (-5..<300).map({ CollidingKey($0) }) { #expect(map[key] == reference[key], "key \(key)") }
    }

    @Test(arguments: [0, 10, 200])
    func randomChangesMatchADictionaryAndCopiesKeepTheirContents(baseCount: Int) {
        var generator = SeededGenerator(state: UInt64(baseCount) + 1)
        var reference: [CollidingKey: String] = [:]
        for key in 0..<baseCount { reference[CollidingKey(key)] = "base-\(key)" }
        var map = LayeredMap(reference)
        var snapshots: [(LayeredMap<CollidingKey, String>, [CollidingKey: String])] = []
        for step in 0..<2_000 {
            let key = CollidingKey(Int.random(in: 0..<250, using: &generator))
            switch Int.random(in: 0..<3, using: &generator) {
            case 0:
                #expect(map.removeValue(forKey: key) == reference.removeValue(forKey: key))
            case 1:
                #expect(map.updateValue("step-\(step)", forKey: key) == reference.updateValue("step-\(step)", forKey: key))
            default:
                let value: String? = Bool.random(using: &generator) ? nil : "set-\(step)"
                map[key] = value
                reference[key] = value
            }
            if step % 250 == 0 { snapshots.append((map, reference)) }
        }
        check(map, equals: reference)
        for (snapshot, contents) in snapshots { check(snapshot, equals: contents) }
    }

    @Test func aRemovedBaseKeyStaysRemovedAcrossAFold() {
        var map = LayeredMap<CollidingKey, String>([1: "one", 2: "two"])
        #expect(map.removeValue(forKey: 1) == "one")
        #expect(map.removeValue(forKey: 1) == nil)
        #expect(map[1] == nil && map.count == 1)
        // Enough changes to fold them into the base.
        for key in 100..<300 { map[CollidingKey(key)] = "\(key)" }
        #expect(map[1] == nil && map[2] == "two" && map[150] == "150" && map.count == 201)
        map[1] = "again"
        #expect(map[1] == "again" && map.count == 202)
    }
}

/// Opening a group files every entry in one pass (`Index.fileAll`); inserting the same entries
/// one by one must give an index that answers every query the same.
@Suite struct IndexBulkBuildTests {
    @Test func anImportNamingOneKeyInTwoSpellingsOfASectionKeepsTheLastEntry() throws {
        // `IdToken` and Go's `IDToken` are one section: the same key in both is one entry, and
        // the bulk filing of an import into an empty group must give what put-by-put gives.
        let document = """
            {"IdToken": {"k": {"credential_type": "IdToken", "secret": "first", "home_account_id": "u.t",
             "environment": "login.microsoftonline.com", "realm": "t", "client_id": "c"}},
             "IDToken": {"k": {"credential_type": "IDToken", "secret": "second", "home_account_id": "u.t",
             "environment": "login.microsoftonline.com", "realm": "t", "client_id": "c"}}}
            """
        let bulk = try Fixtures.group()
        try bulk.importMSAL(Array(document.utf8))
        // The same entries put one by one (what an import into a non-empty group does).
        let stepwise = try Fixtures.group()
        try stepwise.write { transaction in
            let parsed = try MSALDocument.parse(Array(document.utf8))
            transaction.setSections(parsed.sections.map(\.name))
            for (_, content) in parsed.sections {
                guard case .entries(let kind, let entries) = content else { continue }
                for (key, fields) in entries { transaction.put(CacheEntry(kind: kind, fields: fields), key: key) }
            }
        }
        let entries = try bulk.index().documentOrder()
        #expect(entries.count == 1)
        guard case .idToken(let token)? = entries.first?.entry else {
            Issue.record("the entry is not an id token")
            return
        }
        #expect(token.secret == "second")
        #expect(try bulk.exportMSAL(includeSecrets: true) == stepwise.exportMSAL(includeSecrets: true))
    }

    @Test func aBulkBuiltIndexAnswersLikeOneBuiltEntryByEntry() throws {
        // The three msal-python vectors and a synthetic group, merged into one.
        let group = try Fixtures.group()
        for name in Fixtures.vectorNames { try group.importMSAL(try Fixtures.vector(name)) }
        for user in 0..<40 {
            let cache = try TokenCache(clientId: user % 3 == 0 ? Fixtures.clientB : Fixtures.clientA, group: group)
            let request = TokenRequest(
                clientId: cache.clientId, authority: try Authority("https://login.microsoftonline.com/\(Fixtures.tenant)"),
                scopes: ["Scope\(user % 5).Read"], grantType: "authorization_code")
            let response = try Fixtures.response(
                uid: "00000000-0000-0000-2222-\(String(1_000_000_000_000 + user).suffix(12))",
                username: "User\(user)@Contoso.com",
                scope: "Scope\(user % 5).Read openid profile", foci: user % 2 == 0 ? "1" : nil)
            try cache.store(response, for: request, signIn: user % 4 != 0)
        }
        let records = try group.index().documentOrder().map(RecordCodec.record)
        let bulk = try RecordCodec.build(records)
        var single = Index()
        for record in records { try RecordCodec.apply(record, to: &single) }

        #expect(bulk.count == single.count)
        #expect(bulk.documentOrder().map(\.id) == single.documentOrder().map(\.id))
        #expect(bulk.sections == single.sections)
        #expect(bulk.countByKind.filter { $0.value > 0 } == single.countByKind.filter { $0.value > 0 })
        #expect(bulk.nextOrdinal == single.nextOrdinal)
        let homes = Set(single.documentOrder().compactMap(\.entry.homeAccount))
        let clients = [Fixtures.clientA, Fixtures.clientB, Fixtures.clientC].map { $0.lowercased() }
        let cloud = Environment("login.windows.net")
        for home in homes {
            #expect(Set(bulk.entries(account: home).map(\.id)) == Set(single.entries(account: home).map(\.id)))
            #expect(bulk.primaryAccount(home) == single.primaryAccount(home))
            #expect(bulk.accountEntries(home).map(\.id) == single.accountEntries(home).map(\.id))
            for client in clients {
                #expect(
                    bulk.refreshTokenCandidates(account: home, environment: cloud, client: client).map(\.entry.id)
                        == single.refreshTokenCandidates(account: home, environment: cloud, client: client).map(\.entry.id))
                #expect(bulk.isVisible(home, to: client) == single.isVisible(home, to: client))
                #expect(
                    Set(bulk.credentials(account: home, client: client).map(\.id))
                        == Set(single.credentials(account: home, client: client).map(\.id)))
            }
        }
        for client in clients {
            #expect(bulk.visibleAccounts(client: client) == single.visibleAccounts(client: client))
            #expect(bulk.family(of: client, environment: cloud) == single.family(of: client, environment: cloud))
        }
        for stored in single.documentOrder() {
            guard case .accessToken(let token) = stored.entry else { continue }
            #expect(
                bulk.accessTokens(in: token.bucket, intersecting: token.scopes).map(\.id).sorted()
                    == single.accessTokens(in: token.bucket, intersecting: token.scopes).map(\.id).sorted())
            #expect(bulk.accessToken(in: token.bucket, scopes: token.scopes, now: 0) != nil)
        }
        for stored in single.documentOrder() {
            guard case .account(let account) = stored.entry, !account.username.isEmpty else { continue }
            #expect(bulk.accounts(username: account.username.uppercased()) == single.accounts(username: account.username))
        }
    }
}

/// `EntryMap` (the id map) behaves like a dictionary of entries by id, built from decoded
/// chunks, through changes, removals and folds; copies keep their contents.
@Suite struct EntryMapTests {
    private func entry(_ number: Int, kind: CredentialKind = .idToken, version: Int = 0) -> StoredEntry {
        let fields: JSONObject = [
            "credential_type": .string("IdToken"), "secret": .string("v\(version)"), "home_account_id": .string("u.t"),
            "environment": .string("login.microsoftonline.com"), "realm": .string("t"), "client_id": .string("c"),
        ]
        return StoredEntry(
            id: EntryID(kind: kind, key: "key-\(number)"), ordinal: UInt64(number),
            entry: CacheEntry(kind: .idToken, fields: fields))
    }

    private func check(_ map: EntryMap, equals reference: [EntryID: StoredEntry]) {
        #expect(map.count == reference.count && map.isEmpty == reference.isEmpty)
        var seen: [EntryID: StoredEntry] = [:]
        map.forEach { stored in #expect(seen.updateValue(stored, forKey: stored.id) == nil, "\(stored.id.key) twice") }
        #expect(seen == reference)
        #expect(Set(map.values.map(\.id)) == Set(reference.keys))
        for number in -3..<320 {
            for kind in [CredentialKind.idToken, .accessToken] {
                let id = EntryID(kind: kind, key: "key-\(number)")
                #expect(map[id] == reference[id], "\(kind) \(number)")
            }
        }
    }

    @Test func chunksWithARepeatedIdBuildNoMap() {
        #expect(EntryMap([entry(1), entry(2), entry(3), entry(2, version: 1)]) == nil)
        // The same key under another kind is another id.
        #expect(EntryMap([entry(1), entry(1, kind: .accessToken)])?.count == 2)
    }

    @Test(arguments: [0, 7, 300])
    func randomChangesMatchADictionaryAndCopiesKeepTheirContents(baseCount: Int) throws {
        var reference: [EntryID: StoredEntry] = [:]
        var chunks: [[StoredEntry]] = [[], [], []]
        for number in 0..<baseCount {
            let stored = entry(number)
            chunks[number % 3].append(stored)
            reference[stored.id] = stored
        }
        var map = try #require(EntryMap(chunks.flatMap { $0 }))
        check(map, equals: reference)
        var state: UInt64 = UInt64(baseCount) &+ 11
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        var snapshots: [(EntryMap, [EntryID: StoredEntry])] = []
        for step in 0..<1_500 {
            let number = next(320)
            if next(3) == 0 {
                let id = EntryID(kind: .idToken, key: "key-\(number)")
                #expect(map.removeValue(forKey: id) == reference.removeValue(forKey: id))
            } else {
                let stored = entry(number, version: step)
                #expect(map.updateValue(stored, forKey: stored.id) == reference.updateValue(stored, forKey: stored.id))
            }
            if step % 200 == 0 { snapshots.append((map, reference)) }
        }
        check(map, equals: reference)
        for (snapshot, contents) in snapshots { check(snapshot, equals: contents) }
    }
}
