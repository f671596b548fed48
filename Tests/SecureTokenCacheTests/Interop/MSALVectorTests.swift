import Testing

@testable import SecureTokenCache

/// Caches written byte-for-byte by msal-python 1.39.0 (shared/vectors).
@Suite(.timeLimit(.minutes(1))) struct MSALVectorTests {
    @Test(arguments: Fixtures.vectorNames)
    func importThenExportIsByteIdentical(name: String) throws {
        let original = try Fixtures.vector(name)
        let group = try Fixtures.group()
        try group.importMSAL(original)
        let exported = try group.exportMSAL(includeSecrets: true)
        #expect(exported == original, "export of \(name) differs from msal-python's bytes")
    }

    @Test(arguments: Fixtures.vectorNames)
    func parserAndWriterRoundTripEveryVector(name: String) throws {
        let original = try Fixtures.vector(name)
        #expect(JSONWriter.bytes(try JSONParser.parse(original), style: .python) == original)
    }

    @Test func exportWithoutSecretsLeavesEverySecretOut() throws {
        let group = try Fixtures.group()
        try group.importMSAL(try Fixtures.vector("v2_two_accounts_two_tenants"))
        let text = String(decoding: try group.exportMSAL(includeSecrets: false), as: UTF8.self)
        #expect(!text.contains("\"secret\""))
        #expect(text.contains("alice@contoso.com"))
    }

    @Test func v1EntriesAreFoundByTheQueriesMsalPythonWouldAnswer() throws {
        let group = try Fixtures.group()
        try group.importMSAL(try Fixtures.vector("v1_single_account"))
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        let accounts = try cache.accounts()
        #expect(accounts.map(\.username) == ["Alice@Contoso.com"])
        let account = try #require(accounts.first)
        let hit = try #require(
            try cache.accessToken(
                for: ["User.Read", "email"], account: account,
                authority: try Authority("https://login.microsoftonline.com/\(Fixtures.tenant)")))
        #expect(hit.token.secret == "at-v1-secret")
        #expect(try cache.refreshTokens(for: account).map(\.secret) == ["rt-v1-secret"])
        #expect(try cache.account(username: "alice@contoso.COM")?.homeAccountId == account.homeAccountId)
    }

    @Test func v2GuestAccountsAndTwoUsers() throws {
        let group = try Fixtures.group()
        try group.importMSAL(try Fixtures.vector("v2_two_accounts_two_tenants"))
        // The client id is upper-case in AppMetadata; matching is case-insensitive.
        let cache = try TokenCache(clientId: "33333333-aaaa-4bbb-8ccc-000000000003", group: group)
        let accounts = try cache.accounts()
        #expect(accounts.count == 2)
        let alice = try #require(try cache.account(username: "alice@contoso.com"))
        // Alice's primary account entry is in her home tenant, though she is a guest elsewhere.
        #expect(alice.realm == Fixtures.tenant)
        let guest = try Authority("https://login.microsoftonline.com/\(Fixtures.guestTenant)")
        #expect(try cache.accessToken(for: ["User.Read"], account: alice, authority: guest)?.token.realm == Fixtures.guestTenant)
        let home = try Authority("https://login.microsoftonline.com/\(Fixtures.tenant)")
        #expect(
            try cache.accessToken(for: ["https://storage.azure.com/user_impersonation"], account: alice, authority: home) != nil)
        #expect(try cache.accessToken(for: ["Mail.Read"], account: alice, authority: home) != nil)
    }

    @Test func v3FamilyTokenServesBothClients() throws {
        let group = try Fixtures.group()
        try group.importMSAL(try Fixtures.vector("v3_foci_two_clients"))
        let b = try TokenCache(clientId: Fixtures.clientB, group: group)
        let carol = try #require(try b.accounts().first)
        #expect(carol.username == "carol@contoso.com")
        // B has no refresh token of its own: the family token (filed under A's key) is its candidate.
        #expect(try b.refreshTokens(for: carol).map(\.secret) == ["rt-carol-22222222-2"])
        #expect(try b.accessToken(for: ["Calendars.Read"], account: carol)?.token.secret == "at-carol-22222222-2")
        #expect(try b.accessToken(for: ["User.Read"], account: carol) == nil, "A's token is not B's")
    }
}
