import Foundation
import Testing

@testable import SecureTokenCache

/// `CacheGroup.importADAL` on hand-written ADAL for Python caches: the mapping to the unified
/// model, resources as scopes, and malformed files rejected with nothing imported.
@Suite(.timeLimit(.minutes(1))) struct ADALImportTests {
    private func group() -> CacheGroup { CacheGroup(inMemory: "adal-import-\(UUID().uuidString.prefix(8))") }

    private func accessTokens(_ group: CacheGroup) throws -> [AccessToken] {
        try group.index().documentOrder().compactMap { if case .accessToken(let token) = $0.entry { token } else { nil } }
    }

    @Test(arguments: [
        ("https://management.core.windows.net/", "https://management.core.windows.net//.default"),
        ("https://graph.microsoft.com", "https://graph.microsoft.com/.default"),
        ("00000002-0000-0000-c000-000000000000", "00000002-0000-0000-c000-000000000000/.default"),
    ])
    func aResourceBecomesItsDefaultScope(resource: String, target: String) throws {
        #expect(Scopes(resource: resource).values == [target])
        let group = group()
        try group.importADAL(try ADALSupport.cache([ADALSupport.entry(resource: resource)]))
        let token = try #require(try accessTokens(group).first)
        #expect(token.fields.string("target") == target)
        #expect(token.environment.host == "login.microsoftonline.com")
        #expect(token.realm == Fixtures.tenant)
        #expect(token.clientId == ADALSupport.azureCLI)

        let cache = try TokenCache(clientId: ADALSupport.azureCLI, group: group)
        let account = try #require(try cache.account(username: "alice@contoso.com"))
        #expect(try cache.cachedResult(scopes: Scopes(resource: resource), account: account)?.accessToken == "adal-at-secret")
    }

    @Test func theSlashedAndUnslashedResourcesAreDifferentScopes() throws {
        let group = group()
        try group.importADAL(try ADALSupport.cache([ADALSupport.entry(resource: "https://management.core.windows.net/")]))
        let cache = try TokenCache(clientId: ADALSupport.azureCLI, group: group)
        let account = try #require(try cache.account(username: "alice@contoso.com"))
        #expect(try cache.cachedResult(scopes: ["https://management.core.windows.net//.default"], account: account) != nil)
        #expect(try cache.cachedResult(scopes: ["https://management.core.windows.net/.default"], account: account) == nil)
    }

    @Test func aCommonAuthorityTakesTheRealmFromTheIdTokenTenant() throws {
        let group = group()
        try group.importADAL(try ADALSupport.cache([ADALSupport.entry(authority: "https://login.windows.net/common")]))
        let token = try #require(try accessTokens(group).first)
        #expect(token.realm == Fixtures.tenant)
        #expect(token.environment.host == "login.windows.net")
        let cache = try TokenCache(clientId: ADALSupport.azureCLI, group: group)
        // login.windows.net and login.microsoftonline.com are one cloud.
        let account = try #require(try cache.account(username: "alice@contoso.com"))
        #expect(
            try cache.cachedResult(
                scopes: ["https://graph.microsoft.com/.default"], account: account,
                authority: try Authority("https://login.microsoftonline.com/common")) != nil)
    }

    @Test func expiredAccessTokensStayBehindButTheRefreshTokenComes() throws {
        let group = group()
        let count = try group.importADAL(
            try ADALSupport.cache([ADALSupport.entry(expiresOn: ADALSupport.localTime(secondsFromNow: -60))]))
        #expect(count == 2)
        #expect(try accessTokens(group).isEmpty)
        let cache = try TokenCache(clientId: ADALSupport.azureCLI, group: group)
        let account = try #require(try cache.account(username: "alice@contoso.com"))
        #expect(try cache.refreshTokens(for: account).map(\.secret) == ["adal-rt-secret"])
    }

    @Test func usersAreKeptApartAndMatchedCaseInsensitively() throws {
        let group = group()
        try group.importADAL(
            try ADALSupport.cache([
                ADALSupport.entry(userId: "Alice@Contoso.com", refreshToken: "rt-alice"),
                ADALSupport.entry(userId: "bob@contoso.com", accessToken: "at-bob", refreshToken: "rt-bob"),
                ADALSupport.entry(client: Fixtures.clientA, userId: "ALICE@contoso.com", refreshToken: "rt-alice-a"),
            ]))
        let cli = try TokenCache(clientId: ADALSupport.azureCLI, group: group)
        let other = try TokenCache(clientId: Fixtures.clientA, group: group)
        let alice = try #require(try cli.account(username: "alice@CONTOSO.com"))
        let bob = try #require(try cli.account(username: "Bob@Contoso.com"))
        #expect(alice.homeAccountId != bob.homeAccountId)
        #expect(try cli.refreshTokens(for: alice).map(\.secret) == ["rt-alice"])
        #expect(try cli.refreshTokens(for: bob).map(\.secret) == ["rt-bob"])
        // One legacy account per user and cloud, whichever app's ADAL cache named it.
        #expect(try other.account(username: "alice@contoso.com")?.homeAccountId == alice.homeAccountId)
        #expect(try other.refreshTokens(for: alice).map(\.secret) == ["rt-alice-a"])
        #expect(try cli.cachedResult(scopes: ["https://graph.microsoft.com/.default"], account: bob)?.accessToken == "at-bob")
        #expect(try group.statistics().countByKind[.account] == 2)
    }

    @Test func oneUserIsOneLegacyAccountPerCloud() throws {
        let group = group()
        try group.importADAL(
            try ADALSupport.cache([
                ADALSupport.entry(authority: "https://login.windows.net/common", resource: ADALSupport.arm),
                ADALSupport.entry(authority: "https://login.microsoftonline.com/\(Fixtures.tenant)"),
                ADALSupport.entry(authority: "https://login.microsoftonline.us/\(Fixtures.tenant)", refreshToken: "rt-us"),
            ]))
        let accounts = try group.index().documentOrder().compactMap { stored -> Account? in
            if case .account(let account) = stored.entry { account } else { nil }
        }
        #expect(Set(accounts.map(\.homeAccountId)).count == 2)
        #expect(Set(accounts.map(\.environment.group)) == ["login.microsoftonline.com", "login.microsoftonline.us"])
    }

    @Test func appOnlyEntriesAreSkipped() throws {
        let group = group()
        let count = try group.importADAL(try ADALSupport.cache([ADALSupport.entry(userId: nil, refreshToken: nil)]))
        #expect(count == 0)
        #expect(try group.index().count == 0)
    }

    @Test(arguments: [
        ("{}", "a JSON list"),
        ("[1]", "entry 0 is not a JSON object"),
        ("[{\"_clientId\": \"c\"", "not valid JSON"),
    ])
    func aFileThatIsNotAListOfEntriesIsRejected(text: String, message: String) throws {
        let group = group()
        let error = try #require(throws: TokenCacheError.self) { try group.importADAL(Array(text.utf8)) }
        #expect(error.code == .malformedCache)
        #expect(error.message.contains(message), "\(error.message)")
        #expect(try group.index().count == 0)
    }

    static var broken: [(String, [String: Any?], String)] {
        [
            ("no client", ["_clientId": nil], "entry 1 has no _clientId"),
            ("no authority", ["_authority": nil], "entry 1 has no _authority"),
            ("bad authority", ["_authority": "login.microsoftonline.com/common"], "entry 1 has an _authority"),
            ("no user", ["userId": nil], "entry 1 has no userId"),
            ("no resource", ["resource": nil], "entry 1 has no resource"),
            ("bad expiry", ["expiresOn": "next tuesday"], "entry 1 has an expiresOn"),
            ("bad month", ["expiresOn": "2030-13-01 10:00:00.123456"], "entry 1 has an expiresOn"),
            ("no expiry", ["expiresOn": nil], "entry 1 has no expiresOn"),
            ("number user", ["userId": 42], "entry 1 has a userId that is not a string"),
        ]
    }

    @Test(arguments: 0..<broken.count)
    func aBrokenEntryRejectsTheWholeFile(_ which: Int) throws {
        let (_, change, message) = Self.broken[which]
        var bad = ADALSupport.entry(userId: "bob@contoso.com", accessToken: "at-secret-bob", refreshToken: "rt-secret-bob")
        for (key, value) in change { bad[key] = value }
        let group = group()
        let generation = group.generation
        let error = try #require(throws: TokenCacheError.self) {
            try group.importADAL(
                try ADALSupport.cache([ADALSupport.entry(), bad, ADALSupport.entry(userId: "carol@contoso.com")]))
        }
        #expect(error.code == .malformedCache)
        #expect(error.message.contains(message), "\(error.message)")
        #expect(error.message.contains("nothing was imported"))
        for secret in ["at-secret-bob", "rt-secret-bob", "bob@contoso.com", "next tuesday"] {
            #expect(!error.message.contains(secret))
        }
        #expect(try group.index().count == 0)
        #expect(group.generation == generation)
    }

    @Test func adalLocalTimesAreRead() throws {
        let seconds = try #require(ADALCache.parseLocalTime("2030-01-02 03:04:05.678901"))
        var parts = tm()
        var value = time_t(seconds)
        localtime_r(&value, &parts)
        #expect(parts.tm_year + 1900 == 2030 && parts.tm_mon == 0 && parts.tm_mday == 2)
        #expect(parts.tm_hour == 3 && parts.tm_min == 4 && parts.tm_sec == 5)
        #expect(ADALCache.parseLocalTime("2030-01-02 03:04:05") == seconds)
        #expect(ADALCache.parseLocalTime("2030-01-02T03:04:05.1") == seconds)
        // Found by fuzzing: a fraction longer than an Int32 holds trapped on overflow.
        #expect(ADALCache.parseLocalTime("2030-01-02 03:04:05." + String(repeating: "9", count: 40)) == seconds)
        for bad in [
            "", "2030-01-02", "2030-01-02 03:04:05.", "2030-01-02 03:04:05Z", "20x0-01-02 03:04:05",
            "2030-01-02 03:04:05.12x4",
        ] {
            #expect(ADALCache.parseLocalTime(bad) == nil, "\(bad)")
        }
    }
}
