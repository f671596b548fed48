import Testing

@testable import SecureTokenCache

/// The administrator's view of a group: entries, short ids, fingerprints, clearing.
@Suite(.timeLimit(.minutes(1))) struct GroupInspectionTests {
    static let alice = "00000000-0000-0000-1111-000000000001.72f988bf-86f1-41af-91ab-2d7cd011db47"

    func v2(now: Int64 = 1_700_000_000) throws -> CacheGroup {
        let group = try Fixtures.group(now: now)
        try group.importMSAL(try Fixtures.vector("v2_two_accounts_two_tenants"))
        return group
    }

    @Test func fingerprintsAreShortStableAndDistinct() {
        let first = SecretFingerprint.of("at-secret-1")
        #expect(first.count == SecretFingerprint.length)
        #expect(first.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(first == SecretFingerprint.of("at-secret-1"))
        #expect(first != SecretFingerprint.of("at-secret-2"))
        #expect(SecretFingerprint.of("") == "")
        #expect(SecretFingerprint.of(bytes: Array("x".utf8), hexDigits: 64).count == 64)
    }

    @Test func entriesListEveryEntryInDocumentOrderByKind() throws {
        let group = try v2()
        let entries = try group.entries()
        #expect(entries.count == (try group.statistics()).countByKind.values.reduce(0, +))
        let order = entries.map(\.kind.creationOrder)
        #expect(order == order.sorted())
        #expect(Set(entries.map(\.id)).count == entries.count, "short ids must be unique")
        for entry in entries {
            #expect(entry.id.hasPrefix(GroupEntry.idPrefix(entry.kind) + "-"))
            if let secret = entry.fields["secret"]?.stringValue {
                #expect(entry.secretFingerprint == SecretFingerprint.of(secret))
            }
        }
        let tokens = try group.entries(.init(kinds: [.accessToken]))
        #expect(tokens.allSatisfy { $0.username != nil && $0.expiresOn != nil && $0.scopes != nil })
    }

    @Test func entriesFilterByAccountIdUsernameAndClient() throws {
        let group = try v2()
        let byId = try group.entries(.init(account: Self.alice.uppercased()))
        let byName = try group.entries(.init(account: "ALICE@contoso.com"))
        #expect(!byId.isEmpty)
        #expect(byId == byName)
        #expect(byId.allSatisfy { $0.homeAccountId?.rawValue.lowercased() == Self.alice })
        let client = try group.entries(.init(clientId: "33333333-aaaa-4bbb-8ccc-000000000003"))
        #expect(!client.isEmpty)
        #expect(client.allSatisfy { $0.clientId?.lowercased() == "33333333-aaaa-4bbb-8ccc-000000000003" })
        #expect(try group.entries(.init(clientId: "someone-else")).isEmpty)
        #expect(throws: TokenCacheError.self) { try group.entries(.init(account: "nobody@example.com")) }
    }

    @Test func entryIsFoundByIdPrefixAndKey() throws {
        let group = try v2()
        for entry in try group.entries() {
            #expect(try group.entry(id: entry.id) == entry)
            #expect(try group.entry(id: entry.id.uppercased()) == entry)
            #expect(try group.entry(id: entry.key) == entry)
        }
        #expect(try group.entry(id: "at-000000000000") == nil)
        #expect(try group.entry(id: "at-") == nil, "a prefix shorter than 6 characters matches nothing")
    }

    @Test func clearAnAccountIsOneTransactionAndForgetsItsSignIns() throws {
        let group = try v2()
        let before = group.generation
        let planned = try group.entriesToClear(.account("alice@contoso.com"))
        #expect(group.generation == before, "a preview writes nothing")
        let removed = try group.clear(.account("alice@contoso.com"))
        #expect(removed == planned)
        #expect(group.generation == before + 1)
        #expect(try group.entries().allSatisfy { $0.homeAccountId?.rawValue.lowercased() != Self.alice })
        #expect(try group.entries(.init(account: "bob@fabrikam.onmicrosoft.com")).count > 0)
        #expect(throws: TokenCacheError.self) { try group.clear(.account("alice@contoso.com")) }
        #expect(group.generation == before + 1, "a failed clear writes nothing")
    }

    @Test func clearAClientKeepsOtherClients() throws {
        let group = try Fixtures.group()
        try group.importMSAL(try Fixtures.vector("v3_foci_two_clients"))
        let client = "22222222-aaaa-4bbb-8ccc-000000000002"
        let removed = try group.clear(.client(client.uppercased()))
        #expect(!removed.isEmpty)
        #expect(removed.allSatisfy { $0.clientId?.lowercased() == client })
        #expect(try group.entries(.init(clientId: client)).isEmpty)
        #expect(!(try group.entries(.init(clientId: "11111111-aaaa-4bbb-8ccc-000000000001")).isEmpty))
        #expect(throws: TokenCacheError.self) { try group.clear(.client("not-a-client")) }
    }

    @Test func statisticsCountClientsAndExpiredTokensAsTheEntriesDo() throws {
        // Statistics read the members as held: check them against the typed entries in a group
        // that imported the document and in one that loaded the store's records, at times
        // before, amid and after the tokens' expiries.
        let document = try Fixtures.vector("v3_foci_two_clients")
        let probe = try Fixtures.group()
        try probe.importMSAL(document)
        let expiries = try probe.entries(.init(kinds: [.accessToken])).compactMap(\.expiresOn).sorted()
        try #require(expiries.count >= 2 && expiries.first! < expiries.last!)
        for now in [expiries.first! - 1, expiries.first!, expiries.last!] {
            let store = MemoryStore(name: "statistics")
            let imported = try CacheGroup(name: "statistics", store: store, clock: { now })
            try imported.importMSAL(document)
            let loaded = try CacheGroup(name: "statistics", store: store, clock: { now })
            // Counted from the records its open read, before anything files them.
            let counted = try CacheGroup(name: "statistics", store: store, clock: { now }, filesOnFirstUse: true)
            let fromRecords = try counted.statistics()
            for group in [imported, loaded, counted] {
                let entries = try group.entries()
                let statistics = try group.statistics()
                let expired = entries.filter { $0.kind == .accessToken && $0.expiresOn! <= now }
                #expect(statistics.expiredAccessTokens == expired.count)
                #expect(statistics.clients == Set(entries.compactMap { $0.clientId?.lowercased() }).sorted())
                #expect(statistics.clients.count > 1)
                #expect(
                    statistics.accounts
                        == Set(
                            entries.filter { $0.kind == .account }.map { $0.fields["home_account_id"]?.stringValue?.lowercased() }
                        ).count)
                #expect(statistics == fromRecords)
            }
        }
    }

    @Test func aGroupOpenedToBeInspectedFilesItsRecordsOnFirstUse() throws {
        let store = MemoryStore(name: "inspected")
        let writer = try CacheGroup(name: "inspected", store: store)
        try writer.importMSAL(try Fixtures.vector("v2_two_accounts_two_tenants"))
        let everything = try writer.entries()

        let inspected = try CacheGroup(name: "inspected", store: store, filesOnFirstUse: true)
        #expect(try inspected.statistics().countByKind.values.reduce(0, +) == everything.count)
        // Another writer commits: the counts are then the index's, caught up.
        try writer.importMSAL(try Fixtures.vector("v3_foci_two_clients"))
        let now = try writer.entries()
        #expect(now.count > everything.count)
        #expect(try inspected.statistics() == (try writer.statistics()))
        #expect(try inspected.entries() == now)

        // A write is the first use of another such group: it files what its open read first.
        let cleared = try CacheGroup(name: "inspected", store: store, filesOnFirstUse: true)
        let removed = try cleared.clear(.client("22222222-aaaa-4bbb-8ccc-000000000002"))
        #expect(!removed.isEmpty)
        #expect(try cleared.entries().count == now.count - removed.count)
        #expect(try writer.entries() == (try cleared.entries()))
    }

    @Test func aDamagedRecordFailsTheCountAsItFailsTheOpen() throws {
        let store = MemoryStore(name: "damaged")
        let writer = try CacheGroup(name: "damaged", store: store)
        try writer.importMSAL(try Fixtures.vector("v2_two_accounts_two_tenants"))
        let victim = try #require(try writer.index().entries.values.first { $0.id.kind == .refreshToken })
        var record = RecordCodec.record(victim)
        record.payload[record.payload.startIndex] = EntryPayload.version + 1
        _ = try store.transact(since: store.load().1) { _ in [.put(record)] }

        let opened = #expect(throws: TokenCacheError.self) { try CacheGroup(name: "damaged", store: store) }
        let inspected = try CacheGroup(name: "damaged", store: store, filesOnFirstUse: true)
        let counted = #expect(throws: TokenCacheError.self) { try inspected.statistics() }
        let listed = #expect(throws: TokenCacheError.self) { try inspected.entries() }
        #expect(opened?.code == .unsupportedFormat)
        #expect(counted?.code == opened?.code && listed?.code == opened?.code)
    }

    @Test func clearExpiredAndAll() throws {
        let fresh = try v2()
        #expect(try fresh.entriesToClear(.expiredAccessTokens).isEmpty)
        let later = try v2(now: 1_800_000_000)
        let expired = try later.clear(.expiredAccessTokens)
        #expect(!expired.isEmpty && expired.allSatisfy { $0.kind == .accessToken })
        #expect(try later.entries(.init(kinds: [.accessToken])).isEmpty)
        let everything = try later.entries()
        #expect(try later.clear(.all) == everything)
        #expect(try later.entries().isEmpty)
        #expect(try later.statistics().countByKind.isEmpty)
    }
}
