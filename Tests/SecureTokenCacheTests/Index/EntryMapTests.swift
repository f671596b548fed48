import Testing

@testable import SecureTokenCache

/// `EntryMap` (the id map) behaves like a dictionary of entries by id, built from decoded
/// chunks, through changes, removals and folds; copies keep their contents.
@Suite(.timeLimit(.minutes(1))) struct EntryMapTests {
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
