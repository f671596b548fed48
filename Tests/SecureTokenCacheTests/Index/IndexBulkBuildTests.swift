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
}
