import Testing

@testable import SecureTokenCache

/// Ingest: a token response plus its request become entries as `cache-model.md` says.
@Suite(.timeLimit(.minutes(1))) struct IngestTests {
    static let home = "https://login.microsoftonline.com/\(Fixtures.tenant)"
    static let uid = "00000000-0000-0000-1111-000000000001"

    /// The entries of a group by kind, in document order.
    static func entries(_ group: CacheGroup) throws -> [CredentialKind: [JSONObject]] {
        var result: [CredentialKind: [JSONObject]] = [:]
        for stored in try group.index().documentOrder() { result[stored.id.kind, default: []].append(stored.entry.fields) }
        return result
    }

    static func store(
        _ fields: JSONObject, client: String = Fixtures.clientA, authority: String = home, scopes: Scopes = ["User.Read"],
        grant: String? = "authorization_code", keyId: String? = nil, in group: CacheGroup
    ) throws {
        try TokenCache(clientId: client, group: group).store(
            try TokenResponse(fields: fields),
            for: TokenRequest(
                clientId: client, authority: try Authority(authority), scopes: scopes, grantType: grant, keyId: keyId))
    }

    @Test func userResponseBecomesFiveEntriesWithMsalFields() throws {
        let group = try Fixtures.group()
        try TokenCache(clientId: Fixtures.clientA, group: group).store(
            try Fixtures.response(
                scope: "User.Read openid profile", expiresIn: 3600, foci: "1",
                extra: ["ext_expires_in": .number("7200"), "refresh_in": .number("1800")]),
            for: try Fixtures.request(authority: "https://login.microsoftonline.com/organizations"))
        let entries = try Self.entries(group)
        let at = try #require(entries[.accessToken]?.first)
        #expect(at.string("home_account_id") == "\(Self.uid).\(Fixtures.tenant)", "uid.utid from client_info")
        #expect(at.string("realm") == Fixtures.tenant, "realm from the id token's tid")
        #expect(at.string("target") == "User.Read openid profile")
        #expect(at.string("cached_at") == "1700000000")
        #expect(at.string("expires_on") == "1700003600")
        #expect(at.string("extended_expires_on") == "1700007200")
        #expect(at.string("refresh_on") == "1700001800")
        #expect(at.string("token_type") == "Bearer")
        #expect(
            at.keys == [
                "credential_type", "secret", "home_account_id", "environment", "client_id", "target", "realm", "token_type",
                "cached_at", "expires_on", "extended_expires_on", "refresh_on",
            ])
        let account = try #require(entries[.account]?.first)
        #expect(account.string("local_account_id") == Self.uid, "oid")
        #expect(account.string("username") == "Alice@Contoso.com")
        #expect(account.string("authority_type") == "MSSTS")
        #expect(account.string("account_source") == "authorization_code")
        let rt = try #require(entries[.refreshToken]?.first)
        #expect(rt.string("family_id") == "1")
        #expect(rt.string("last_modification_time") == "1700000000")
        #expect(entries[.appMetadata]?.first?.string("family_id") == "1")
        #expect(entries[.idToken]?.count == 1)
    }

    @Test func adfsWithoutClientInfoUsesTheSubjectAndTheAuthorityTenant() throws {
        let group = try Fixtures.group()
        let idToken = Fixtures.jwt(["sub": .string("erin-sub"), "upn": .string("erin@contoso.com"), "aud": .string("adfs-app")])
        try Self.store(
            [
                "access_token": .string("at"), "id_token": .string(idToken), "expires_in": .string("3600"),
                "scope": .string("openid"),
            ],
            client: "adfs-app", authority: "https://fs.contoso.com/adfs", scopes: ["https://api.contoso.com/Read"], in: group)
        let entries = try Self.entries(group)
        let account = try #require(entries[.account]?.first)
        #expect(account.string("home_account_id") == "erin-sub")
        #expect(account.string("realm") == "adfs")
        #expect(account.string("local_account_id") == "erin-sub", "sub when there is no oid")
        #expect(account.string("username") == "erin@contoso.com", "upn when there is no preferred_username")
        #expect(account.string("authority_type") == "ADFS")
        #expect(entries[.accessToken]?.first?.string("environment") == "fs.contoso.com")
    }

    @Test func appOnlyTokenHasNullHomeAccountAndNoAccount() throws {
        let group = try Fixtures.group()
        try Self.store(
            ["access_token": .string("at-app"), "expires_in": .number("3599"), "token_type": .string("Bearer")],
            client: "daemon", scopes: ["https://graph.microsoft.com/.default"], grant: "client_credentials", in: group)
        let entries = try Self.entries(group)
        let at = try #require(entries[.accessToken]?.first)
        #expect(at["home_account_id"] == .null)
        #expect(at.string("target") == "https://graph.microsoft.com/.default", "requested scopes when the server sends none")
        #expect(entries[.account] == nil && entries[.refreshToken] == nil && entries[.idToken] == nil)
        #expect(try group.index().count == 2, "the access token and the app metadata")
    }

    @Test func sshCertificateKeepsItsTypeAndKeyAndDoesNotTouchTheAccount() throws {
        let group = try Fixtures.group()
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        try cache.store(try Fixtures.response(scope: "User.Read"), for: try Fixtures.request(authority: Self.home))
        let accountBefore = try Self.entries(group)[.account]
        // msal's ssh-cert answer: client_info, no id token.
        try Self.store(
            [
                "token_type": .string("ssh-cert"), "access_token": .string("ssh-cert-1"), "expires_in": .number("3600"),
                "client_info": .string(Fixtures.clientInfo(uid: Self.uid, utid: Fixtures.tenant)),
                "scope": .string("https://pas.windows.net/CheckMyAccess/Linux/.default"),
            ], scopes: ["https://pas.windows.net/CheckMyAccess/Linux/.default"], grant: "refresh_token", keyId: "key-1", in: group
        )
        let ssh = try #require(try Self.entries(group)[.accessToken]?.first { $0.string("secret") == "ssh-cert-1" })
        #expect(ssh.string("token_type") == "ssh-cert")
        #expect(ssh.string("key_id") == "key-1")
        // A response without an id token says nothing about the account: it must stay as stored.
        #expect(try Self.entries(group)[.account] == accountBefore)
        let alice = try #require(try cache.account(username: "alice@contoso.com"))
        #expect(
            try cache.accessToken(
                for: ["https://pas.windows.net/CheckMyAccess/Linux/.default"], account: alice,
                authority: try Authority(Self.home), tokenType: "ssh-cert")?.token.secret == "ssh-cert-1")
        // A certificate answers only for the key it certifies, as msal-python matches key_id.
        for (key, secret) in [("key-1", "ssh-cert-1"), ("key-2", nil)] {
            #expect(
                try cache.accessToken(
                    for: ["https://pas.windows.net/CheckMyAccess/Linux/.default"], account: alice,
                    authority: try Authority(Self.home), tokenType: "ssh-cert", keyId: key)?.token.secret == secret, "\(key)")
        }
    }

    @Test func refreshKeepsWhatTheSignInAndOtherSDKsStoredOnTheAccount() throws {
        let group = try Fixtures.group()
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        try cache.store(try Fixtures.response(scope: "User.Read"), for: try Fixtures.request(authority: Self.home))
        // Another SDK adds a field to the account entry.
        let stored = try #require(try group.index().documentOrder().first { $0.id.kind == .account })
        var fields = stored.entry.fields
        fields["name"] = .string("Alice Example")
        fields["enrollment_id"] = .string("enr-9")
        var document = JSONObject()
        document["Account"] = .object(JSONObject([(key: stored.id.key, value: .object(fields))]))
        try group.importMSAL(JSONWriter.bytes(.object(document), style: .python))
        // A silent refresh (grant refresh_token): no account_source in the new entry.
        try cache.store(
            try Fixtures.response(accessToken: "at-2", scope: "Mail.Read"),
            for: TokenRequest(
                clientId: Fixtures.clientA, authority: try Authority(Self.home), scopes: ["Mail.Read"], grantType: "refresh_token"
            ),
            signIn: false)
        let account = try #require(try Self.entries(group)[.account]?.first)
        #expect(
            account.string("account_source") == "authorization_code", "msal-python keeps it too: it skips the account on refresh")
        #expect(account.string("name") == "Alice Example")
        #expect(account.string("enrollment_id") == "enr-9")
        #expect(try Self.entries(group)[.account]?.count == 1)
    }

    @Test func expiryComesFromExpiresOnOrDefaultsToTenMinutes() throws {
        let group = try Fixtures.group()
        try Self.store(["access_token": .string("a"), "expires_on": .string("1700000900")], client: "c1", grant: nil, in: group)
        try Self.store(["access_token": .string("b")], client: "c2", grant: nil, in: group)
        let tokens = try Self.entries(group)[.accessToken] ?? []
        #expect(tokens.map { $0.string("expires_on") } == ["1700000900", "1700000600"], "msal-python's 600 s default")
    }

    @Test func rotatedFamilyTokenReplacesTheOneRedeemedInPlace() throws {
        // v3: B redeems A's family token; the rotated token stays one entry, under A's key.
        let group = try Fixtures.group()
        try group.importMSAL(try Fixtures.vector("v3_foci_two_clients"))
        let key = try #require(try group.index().documentOrder().first { $0.id.kind == .refreshToken }?.id)
        var transaction = IndexTransaction(try group.index())
        let ingest = try Ingest(
            response: try Fixtures.response(
                uid: "00000000-0000-0000-3333-000000000003", accessToken: "at-b", refreshToken: "rt-rotated",
                scope: "Calendars.Read", foci: "1"),
            request: try Fixtures.request(client: Fixtures.clientB, authority: Self.home, scopes: ["Calendars.Read"]),
            now: 1_700_000_100)
        ingest.apply(to: &transaction, redeemed: key, signIn: false)
        let rts = transaction.index.documentOrder().filter { $0.id.kind == .refreshToken }
        #expect(rts.map(\.id) == [key])
        if case .refreshToken(let rt)? = rts.first?.entry {
            #expect(rt.secret == "rt-rotated")
            #expect(rt.clientId == Fixtures.clientA, "the owner stays")
        }
    }

    @Test func aRefreshCommitsOnlyTheEntriesItChanged() throws {
        let group = try Fixtures.group()
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        let request = try Fixtures.request(authority: Self.home)
        try cache.store(try Fixtures.response(foci: "1"), for: request)
        func changes(_ response: TokenResponse) throws -> [RecordID] {
            var transaction = IndexTransaction(try group.index())
            try Ingest(response: response, request: request, now: 1_700_000_000).apply(to: &transaction, signIn: true)
            return transaction.recordChanges.map(\.id)
        }
        // The same answer again at the same second: every entry is what is filed already.
        #expect(try changes(try Fixtures.response(foci: "1")).isEmpty)
        // A new access token and refresh token for the same user: the account, id token and app
        // metadata stay as they are, so neither is rewritten.
        let rotated = try changes(try Fixtures.response(accessToken: "at-2", refreshToken: "rt-2", foci: "1"))
        #expect(rotated.map(\.kind).sorted { $0.rawValue < $1.rawValue } == [.accessToken, .refreshToken])
        // Through the group: a store of what is cached commits nothing, a real refresh commits.
        let generation = group.generation
        try cache.store(try Fixtures.response(foci: "1"), for: request)
        #expect(group.generation == generation)
        try cache.store(try Fixtures.response(accessToken: "at-2", foci: "1"), for: request)
        #expect(group.generation == generation + 1)
        #expect(
            try cache.accessToken(for: ["User.Read"], account: try #require(try cache.accounts().first))?.token.secret == "at-2")
    }

    @Test func storingWhatAStoreHoldsAlreadyCommitsNothing() throws {
        // Entries read from a store are held as their record payloads: compared as those.
        let folder = TemporaryDirectory()
        func open() throws -> CacheGroup {
            try CacheGroup(
                name: "same", store: try FileStore(group: "same", keyProvider: testPassphrase(), root: folder.path),
                clock: { 1_700_000_000 })
        }
        let request = try Fixtures.request(authority: Self.home)
        try TokenCache(clientId: Fixtures.clientA, group: try open()).store(try Fixtures.response(foci: "1"), for: request)
        let reopened = try open()
        let account = try #require(try reopened.index().documentOrder().first { $0.id.kind == .account })
        guard case .payload = account.entry.members else {
            Issue.record("a reopened group should hold its entries as payloads")
            return
        }
        let cache = try TokenCache(clientId: Fixtures.clientA, group: reopened)
        let generation = reopened.generation
        try cache.store(try Fixtures.response(foci: "1"), for: request)
        #expect(reopened.generation == generation)
        try cache.store(try Fixtures.response(refreshToken: "rt-2", foci: "1"), for: request)
        #expect(reopened.generation == generation + 1)
        let secrets = try open().index().documentOrder().compactMap { stored -> String? in
            if case .refreshToken(let token) = stored.entry { token.secret } else { nil }
        }
        #expect(secrets == ["rt-2"])
    }
}
