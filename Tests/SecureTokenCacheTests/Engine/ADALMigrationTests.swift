import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

/// Migration from ADAL for Python caches written by the real adal 1.2.7 against the fake
/// authority: imported, found by username, redeemed silently, replaced by unified accounts.
@Suite(.tags(.multiProcess), .timeLimit(.minutes(3))) struct ADALMigrationTests {
    @Test func aRealADALCacheIsMigratedFoundByUsernameAndRedeemed() async throws {
        let authority = try FakeAuthority()
        let tenant = Fixtures.tenant
        let bytes = try await ADALSupport.buildCache(
            [
                .init(username: "Alice@Contoso.com", resource: ADALSupport.arm),
                .init(username: "alice@contoso.com", resource: ADALSupport.graph),
                .init(username: "bob@contoso.com", resource: ADALSupport.graph, tenant: tenant),
            ], authority: authority)
        let world = try SilentWorld()
        let cli = try world.cache(ADALSupport.azureCLI)

        // Alice: two access tokens, one refresh token (adal repeats its MRRT per resource), one
        // account; Bob: one of each.
        #expect(try world.group.importADAL(bytes) == 7)
        let alice = try #require(try cli.account(username: "ALICE@contoso.COM"))
        let bob = try #require(try cli.account(username: "bob@contoso.com"))
        #expect(alice.isLegacy && bob.isLegacy)
        #expect(alice.homeAccountId != bob.homeAccountId)
        #expect(alice.username == "Alice@Contoso.com")
        #expect(alice.environment.host == "127.0.0.1")
        #expect(alice.realm == tenant)
        #expect(try cli.accounts().count == 2)
        #expect(try cli.refreshTokens(for: alice).count == 1)

        // The migrated access tokens answer their resources' /.default scopes, exactly.
        let arm = try #require(try cli.cachedResult(scopes: Scopes(resource: ADALSupport.arm), account: alice))
        #expect(arm.scopes.values == ["https://management.core.windows.net//.default"])
        #expect(try cli.cachedResult(scopes: ["https://management.core.windows.net/.default"], account: alice) == nil)
        #expect(try cli.cachedResult(scopes: ["https://graph.microsoft.com/.default"], account: alice) != nil)
        #expect(try cli.cachedResult(scopes: ["https://graph.microsoft.com/.default"], account: bob) != nil)

        // A scope ADAL never had: the legacy refresh token is redeemed at the v2 endpoint (adal
        // itself made a refresh request when it reused Alice's MRRT for Graph).
        let before = try await authority.refreshRequests(ADALSupport.azureCLI)
        let storage = Scopes(resource: "https://storage.azure.com")
        let result = try await cli.acquireTokenSilently(
            scopes: storage, account: alice, authority: try authority.authority(tenant))
        #expect(!result.isFromCache)
        #expect(!result.account.isLegacy)
        #expect(result.account.username.lowercased() == "alice@contoso.com")
        #expect(result.account.homeAccountId.tenantId == tenant)
        #expect(try await authority.refreshRequests(ADALSupport.azureCLI) == before + 1)

        // The unified account replaced the legacy one; Bob is untouched.
        let unified = try #require(try cli.account(username: "alice@contoso.com"))
        #expect(unified.homeAccountId == result.account.homeAccountId)
        #expect(try world.group.index().entries(account: alice.homeAccountId.normalised).isEmpty)
        #expect(try cli.accounts().map(\.isLegacy).sorted { !$0 && $1 } == [false, true])
        #expect(try cli.account(username: "bob@contoso.com")?.isLegacy == true)

        // The next call is served from the cache under the unified account.
        let again = try await cli.acquireTokenSilently(
            scopes: storage, account: unified, authority: try authority.authority(tenant))
        #expect(again.isFromCache && again.accessToken == result.accessToken)
        #expect(try await authority.refreshRequests(ADALSupport.azureCLI) == before + 1)
    }

    @Test func concurrentCallersWithALegacyAccountCauseOneRedemption() async throws {
        let authority = try FakeAuthority()
        let bytes = try await ADALSupport.buildCache(
            [.init(username: "erin@contoso.com", resource: ADALSupport.graph)], authority: authority)
        let world = try SilentWorld()
        let cli = try world.cache(ADALSupport.azureCLI)
        try world.group.importADAL(bytes)
        let erin = try #require(try cli.account(username: "erin@contoso.com"))
        let before = try await authority.refreshRequests(ADALSupport.azureCLI)
        // A slow authority makes the callers really overlap: all but one queue behind the lock
        // and find the legacy account already replaced when they get it.
        try await authority.control(["delay": 0.3])

        let target = try authority.authority(Fixtures.tenant)
        let scopes: Scopes = ["https://vault.azure.net/.default"]
        let caches = try (0..<4).map { _ in try world.cache(ADALSupport.azureCLI) }
        let results = try await withThrowingTaskGroup(of: AuthenticationResult.self) { tasks in
            for cache in caches {
                tasks.addTask { try await cache.acquireTokenSilently(scopes: scopes, account: erin, authority: target) }
            }
            return try await tasks.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(results.map(\.accessToken)).count == 1)
        #expect(results.allSatisfy { !$0.account.isLegacy })
        #expect(try await authority.refreshRequests(ADALSupport.azureCLI) == before + 1)

        // An app still holding the legacy account value is served as the unified account.
        let later = try await cli.acquireTokenSilently(scopes: scopes, account: erin, authority: target)
        #expect(later.isFromCache && !later.account.isLegacy)
        #expect(try await authority.refreshRequests(ADALSupport.azureCLI) == before + 1)
    }

    @Test func declinedScopesOfALegacyRedemptionAreCachedAndReported() async throws {
        let authority = try FakeAuthority()
        let bytes = try await ADALSupport.buildCache(
            [.init(username: "carol@contoso.com", resource: ADALSupport.graph)], authority: authority)
        let world = try SilentWorld()
        let cli = try world.cache(ADALSupport.azureCLI)
        try world.group.importADAL(bytes)
        let carol = try #require(try cli.account(username: "carol@contoso.com"))
        try await authority.control(["decline": ["https://storage.azure.com/.default"]])

        let error = try #require(
            await SilentWorld.error {
                try await cli.acquireTokenSilently(
                    scopes: ["https://vault.azure.net/.default", "https://storage.azure.com/.default"], account: carol,
                    authority: try authority.authority(Fixtures.tenant))
            })
        #expect(error.code == .serverDeclinedScopes)
        let details = try #require(error.declinedScopes)
        #expect(details.declined == ["https://storage.azure.com/.default"])
        #expect(!details.result.account.isLegacy)
        let unified = try #require(try cli.account(username: "carol@contoso.com"))
        #expect(!unified.isLegacy)
        let cached = try #require(try cli.cachedResult(scopes: ["https://vault.azure.net/.default"], account: unified))
        #expect(cached.accessToken == details.result.accessToken)
    }

    @Test func aRefusedLegacyRefreshTokenMeansInteractionAndKeepsTheLegacyAccount() async throws {
        let authority = try FakeAuthority()
        let bytes = try await ADALSupport.buildCache(
            [.init(username: "dave@contoso.com", resource: ADALSupport.graph)], authority: authority)
        let world = try SilentWorld()
        let cli = try world.cache(ADALSupport.azureCLI)
        try world.group.importADAL(bytes)
        let dave = try #require(try cli.account(username: "dave@contoso.com"))
        try await authority.control(["mode": "interaction_required", "times": 1])

        let error = try #require(
            await SilentWorld.error {
                try await cli.acquireTokenSilently(
                    scopes: ["https://vault.azure.net/.default"], account: dave,
                    authority: try authority.authority(Fixtures.tenant))
            })
        #expect(error.code == .interactionRequired)
        #expect(error.server?.error == "interaction_required")
        #expect(error.server?.suberror == "basic_action")
        #expect(error.server?.correlationId?.hasPrefix("c0ffee00-") == true)
        #expect(try cli.account(username: "dave@contoso.com")?.isLegacy == true)
    }

    @Test func anExportedMigratedAccessTokenIsUsableByMSALPython() async throws {
        let group = CacheGroup(inMemory: "adal-export-\(UUID().uuidString.prefix(8))")
        try group.importADAL(
            try ADALSupport.cache([
                ADALSupport.entry(resource: ADALSupport.arm, accessToken: "adal-arm-secret"),
                ADALSupport.entry(resource: ADALSupport.graph, accessToken: "adal-graph-secret"),
            ]))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("stc-adal-export-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: path) }
        try Data(try group.exportMSAL(includeSecrets: true)).write(to: path)

        // "refresh": a scope with no cached token, so msal-python redeems the migrated refresh
        // token (at its own fake endpoint).
        let lookups = [
            ("arm", "silent", [ADALSupport.arm + "/.default"]), ("graph", "silent", [ADALSupport.graph + "/.default"]),
            ("refresh", "refresh", ["https://vault.azure.net/.default"]),
        ].map { id, kind, scopes in
            MSALPython.Lookup(
                id: id, kind: kind, client_id: ADALSupport.azureCLI,
                authority: "https://login.microsoftonline.com/\(Fixtures.tenant)", scopes: scopes, username: "alice@contoso.com")
        }
        let consumed = try await ADALSupport.offPool {
            try MSALPython.consume([.init(name: "adal", path: path.path, lookups: lookups)])
        }
        let answers = try #require(consumed.results["adal"])
        #expect(answers["arm"]?.secret == "adal-arm-secret")
        #expect(answers["graph"]?.secret == "adal-graph-secret")
        #expect(answers["arm"]?.network_calls == 0)
        #expect(answers["refresh"]?.sent_refresh_tokens == ["adal-rt-secret"])
        #expect(consumed.reserialized_identical["adal"] == true)
    }
}
