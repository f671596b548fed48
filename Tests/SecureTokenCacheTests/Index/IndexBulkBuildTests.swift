import Testing

@testable import SecureTokenCache

/// Opening a group files every entry in one pass (`Index.fileAll`); inserting the same entries
/// one by one must give an index that answers every query the same.
@Suite(.timeLimit(.minutes(1))) struct IndexBulkBuildTests {
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

    @Test func anImportIntoANewGroupCommitsEachEntryOnceAndTheLayoutLast() throws {
        // A new group's index, as a memory group opens with no records.
        let index = try RecordCodec.build([])
        #expect(index.count == 0)
        #expect(index.sections.isEmpty)
        var transaction = IndexTransaction(index)
        let document = try MSALDocument.read(try Fixtures.vector(Fixtures.vectorNames[0]))
        let imported = MSALDocument.merge(document, into: &transaction)
        #expect(imported == document.entries.count)
        let listed = transaction.recordChanges
        let taken = transaction.takeRecordChanges()
        #expect(transaction.changes.isEmpty)
        // What is handed over is what would have been copied: every entry's record in document
        // order, then the section layout the import set.
        #expect(taken.map(\.id) == listed.map(\.id))
        #expect(taken.count == document.entries.count + 1)
        #expect(taken.dropLast().map(\.id) == document.entries.map(\.id))
        guard case .put(let layout)? = taken.last else {
            Issue.record("the last change is not a put of the layout")
            return
        }
        #expect(layout.id.kind == .layout)
        #expect(layout.payload.elementsEqual(RecordCodec.record(sections: transaction.index.sections).payload))
        // A memory group opened on them has what the import filed.
        let reopened = try RecordCodec.build(taken.compactMap { if case .put(let record) = $0 { record } else { nil } })
        #expect(reopened.documentOrder().map(\.id) == transaction.index.documentOrder().map(\.id))
        #expect(reopened.sections == transaction.index.sections)
    }

    /// Stores a response for each of `users` (numbered, in the client the number picks) with
    /// access tokens whose secret ends in `secret`.
    private static func store(users: Range<Int>, secret: String, into group: CacheGroup) throws {
        for user in users {
            let cache = try TokenCache(clientId: user % 3 == 0 ? Fixtures.clientB : Fixtures.clientA, group: group)
            let response = try Fixtures.response(
                uid: "00000000-0000-0000-3333-\(String(1_000_000_000_000 + user).suffix(12))",
                username: "User\(user)@Contoso.com",
                accessToken: "at-\(user)-\(secret)", scope: "Scope\(user % 5).Read openid profile",
                foci: user % 2 == 0 ? "1" : nil)
            try cache.store(
                response, for: try Fixtures.request(client: cache.clientId, scopes: ["Scope\(user % 5).Read"]), signIn: true)
        }
    }

    @Test func aLargeImportIntoAGroupThatHoldsEntriesFilesAsPuttingThemOneByOneDoes() throws {
        // The group: entries read from a document (held as payloads) and entries stored since
        // (typed, in the index's changes), and one sharing its ordinal with another, as two
        // instances that each hold part of a group may give.
        let group = try Fixtures.group()
        try group.importMSAL(try Fixtures.vector("v2_two_accounts_two_tenants"))
        try Self.store(users: 0..<10, secret: "old", into: group)
        var index = try group.index()
        // Both from the vector, which the document holds unchanged.
        let vectorTokens = index.documentOrder().filter { $0.id.kind == .accessToken }.prefix(2)
        let twin = try #require(vectorTokens.first)
        let sharing = try #require(vectorTokens.last)
        index.insert(
            StoredEntry(id: EntryID(kind: .accessToken, key: twin.id.key + "-twin"), ordinal: sharing.ordinal, entry: twin.entry))
        // The document: the vector's entries unchanged, the ten users' with new secrets (their
        // accounts unchanged), the twin's with a new one, and sixty users more.
        let source = try Fixtures.group()
        try source.importMSAL(try Fixtures.vector("v2_two_accounts_two_tenants"))
        try Self.store(users: 0..<70, secret: "new", into: source)
        var twinFields = twin.entry.fields
        twinFields["secret"] = .string("twin-new")
        let twinChanged = StoredEntry(
            id: EntryID(kind: .accessToken, key: twin.id.key + "-twin"), ordinal: 1,
            entry: CacheEntry(kind: .accessToken, fields: twinFields))
        var document = try MSALDocument.read(try source.exportMSAL(includeSecrets: true))
        document.entries.append(RecordCodec.record(twinChanged))
        document.keyHashes = nil
        #expect(IndexTransaction.filesInOneGo(adding: document.entries.count, to: index.count))

        var inOnePass = IndexTransaction(index)
        #expect(MSALDocument.merge(document, into: &inOnePass) == document.entries.count)
        // The same records put one by one, as an import of a few records does.
        var oneByOne = IndexTransaction(index)
        oneByOne.setSections(inOnePass.index.sections)
        var decoder = EntryDecoder()
        for record in document.entries {
            let kind = try #require(RecordCodec.credentialKind(record.id.kind))
            oneByOne.put(try decoder.decode(kind: kind, payload: record.payload).entry, key: record.id.name)
        }

        // In ordinal order, then id order for the two that share one.
        func inOrder(_ index: Index) -> [StoredEntry] {
            index.documentOrder().sorted { $0.ordinal != $1.ordinal ? $0.ordinal < $1.ordinal : $0.id < $1.id }
        }
        let filed = inOnePass.index
        let put = oneByOne.index
        #expect(filed.count == put.count && filed.count > index.count)
        #expect(inOrder(filed).map(\.id) == inOrder(put).map(\.id))
        #expect(inOrder(filed).map(\.ordinal) == inOrder(put).map(\.ordinal))
        #expect(inOrder(filed).map(\.entry) == inOrder(put).map(\.entry))
        #expect(filed.countByKind.filter { $0.value > 0 } == put.countByKind.filter { $0.value > 0 })
        #expect(filed.nextOrdinal == put.nextOrdinal)
        #expect(filed[twinChanged.id]?.entry.fields.string("secret") == "twin-new")
        #expect(filed[twin.id]?.entry.fields == twin.entry.fields)
        // Every map files the same entries under the same keys; in document order, as opening the
        // group's records files them.
        let filedMaps = filed.filingContents()
        #expect(filedMaps == (try RecordCodec.build(inOrder(filed).map(RecordCodec.record)).filingContents()))
        for (name, contents) in put.filingContents() {
            #expect(filedMaps[name]?.mapValues(Set.init) == contents.mapValues(Set.init), "map \(name)")
        }
        // The changes: a record for each entry that changed or came, none for the unchanged.
        func puts(_ transaction: IndexTransaction) -> [RecordID: [UInt8]] {
            var records: [RecordID: [UInt8]] = [:]
            for case .put(let record) in transaction.changes { records[record.id] = Array(record.payload) }
            return records
        }
        // Putting one by one also writes an entry stored since the import (typed) again when the
        // document holds it unchanged; filed in one pass, it is no change.
        let written = puts(inOnePass)
        var writtenOneByOne = puts(oneByOne)
        for (id, payload) in writtenOneByOne where written[id] == nil {
            let stored = try #require(index.entries.recordsInOrder().first { $0.record.id == id }?.record)
            #expect(EntryPayload.sameMembers(stored.payload, payload[...]), "\(id.name)")
            writtenOneByOne[id] = nil
        }
        #expect(written == writtenOneByOne)
        #expect(written.count < document.entries.count)

        // The same document again is no change at all.
        var again = IndexTransaction(filed)
        #expect(MSALDocument.merge(document, into: &again) == document.entries.count)
        #expect(again.changes.isEmpty)
        #expect(inOrder(again.index).map(\.ordinal) == inOrder(filed).map(\.ordinal))

        // A record repeated: the caller hears of it before anything is filed.
        struct Refused: Error {}
        var repeated = document
        repeated.entries.append(document.entries[document.entries.count / 2])
        var refused = IndexTransaction(index)
        #expect(throws: Refused.self) { try MSALDocument.merge(repeated, into: &refused) { throw Refused() } }
        #expect(refused.changes.isEmpty)
        #expect(refused.index.documentOrder().map(\.id) == index.documentOrder().map(\.id))
    }
}
