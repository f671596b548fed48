import Testing

@testable import SecureTokenCache

/// App-only tokens (client credentials): lookup, store, expiry, `refresh_on`, every SDK's shape on
/// import, msal-python's shape on export, and bad input that stores nothing.
@Suite(.timeLimit(.minutes(1))) struct AppTokenTests {
    static let daemon = "55555555-aaaa-4bbb-8ccc-000000000005"
    static let graph: Scopes = ["https://graph.microsoft.com/.default"]
    static let vault: Scopes = ["https://vault.azure.net/.default"]

    static func authority(_ tenant: String = Fixtures.tenant, host: String = "login.microsoftonline.com") throws -> Authority {
        try Authority("https://\(host)/\(tenant)")
    }

    static func request(_ scopes: Scopes = graph, tenant: String = Fixtures.tenant) throws -> TokenRequest {
        TokenRequest(
            clientId: daemon, authority: try authority(tenant), scopes: scopes, grantType: TokenCache.clientCredentialsGrant)
    }

    /// A client-credentials answer as Entra ID sends it: no scope, no refresh or id token.
    static func response(_ secret: String = "at-app", expiresIn: Int? = 3599, refreshIn: Int? = nil, extra: JSONObject = [:])
        throws -> TokenResponse
    {
        var fields: JSONObject = ["token_type": .string("Bearer"), "access_token": .string(secret)]
        if let expiresIn {
            fields["expires_in"] = .number(String(expiresIn))
            fields["ext_expires_in"] = .number(String(expiresIn + 3600))
        }
        if let refreshIn { fields["refresh_in"] = .number(String(refreshIn)) }
        for (key, value) in extra { fields[key] = value }
        return try TokenResponse(fields: fields)
    }

    static func cache(_ group: CacheGroup) throws -> TokenCache { try TokenCache(clientId: daemon, group: group) }

    // MARK: - Lookup

    @Test func aStoredAppTokenIsFoundForItsTenantResourceAndClientOnly() throws {
        let group = try Fixtures.group()
        let cache = try Self.cache(group)
        try cache.storeAppToken(try Self.response("at-graph"), for: try Self.request())
        try cache.storeAppToken(try Self.response("at-vault"), for: try Self.request(Self.vault))
        try cache.storeAppToken(try Self.response("at-guest"), for: try Self.request(tenant: Fixtures.guestTenant))

        let found = try #require(try cache.appToken(for: Self.graph, authority: try Self.authority()))
        #expect(found.token.secret == "at-graph")
        #expect(found.token.homeAccountId == nil)
        #expect(!found.shouldRefresh)
        #expect(try cache.appToken(for: Self.vault, authority: try Self.authority())?.token.secret == "at-vault")
        #expect(
            try cache.appToken(for: Self.graph, authority: try Self.authority(Fixtures.guestTenant))?.token.secret == "at-guest")
        // Another resource, tenant or client: no answer.
        #expect(try cache.appToken(for: ["api://other/.default"], authority: try Self.authority()) == nil)
        #expect(try cache.appToken(for: Self.graph, authority: try Self.authority("0b3c7c7e-0000-4000-8000-00000000000c")) == nil)
        let other = try TokenCache(clientId: Fixtures.clientA, group: group)
        #expect(try other.appToken(for: Self.graph, authority: try Self.authority()) == nil)
        // Another cloud of the same alias group finds it; another cloud does not.
        #expect(try cache.appToken(for: Self.graph, authority: try Self.authority(host: "login.windows.net")) != nil)
        #expect(try cache.appToken(for: Self.graph, authority: try Self.authority(host: "login.microsoftonline.us")) == nil)
    }

    @Test func scopesMatchCaseInsensitivelyAsASubset() throws {
        let group = try Fixtures.group()
        let cache = try Self.cache(group)
        try cache.storeAppToken(
            try Self.response("at-two", extra: ["scope": .string("api://r/A api://r/B")]),
            for: try Self.request(["api://r/A", "api://r/B"]))
        #expect(try cache.appToken(for: ["api://r/A"], authority: try Self.authority())?.token.secret == "at-two")
        #expect(try cache.appToken(for: ["API://R/b"], authority: try Self.authority())?.token.secret == "at-two")
        #expect(try cache.appToken(for: ["api://r/A", "api://r/C"], authority: try Self.authority()) == nil)
    }

    @Test func aTokenWithin300SecondsOfExpiryIsAMissAndRefreshOnSetsShouldRefresh() throws {
        let clock = TestClock()
        let group = try CacheGroup(name: "test", store: MemoryStore(name: "test"), clock: clock.closure)
        let cache = try Self.cache(group)
        let start = clock.now
        try cache.storeAppToken(try Self.response(expiresIn: 3599, refreshIn: 1800), for: try Self.request())
        let stored = try #require(try cache.appToken(for: Self.graph, authority: try Self.authority())?.token)
        #expect(stored.refreshOn == start + 1800)
        #expect(stored.expiresOn == start + 3599)
        #expect(stored.extendedExpiresOn == start + 3599 + 3600)

        clock.now = start + 1799
        #expect(try cache.appToken(for: Self.graph, authority: try Self.authority())?.shouldRefresh == false)
        clock.now = start + 1800
        #expect(try cache.appToken(for: Self.graph, authority: try Self.authority())?.shouldRefresh == true)
        clock.now = start + 3599 - 301
        #expect(try cache.appToken(for: Self.graph, authority: try Self.authority()) != nil)
        clock.now = start + 3599 - 300
        #expect(try cache.appToken(for: Self.graph, authority: try Self.authority()) == nil)
    }

    @Test func storingAgainReplacesTheTokenOfTheSameScopes() throws {
        let group = try Fixtures.group()
        let cache = try Self.cache(group)
        try cache.storeAppToken(try Self.response("at-1"), for: try Self.request())
        try cache.storeAppToken(try Self.response("at-2"), for: try Self.request())
        #expect(try cache.appToken(for: Self.graph, authority: try Self.authority())?.token.secret == "at-2")
        #expect(try group.index().countByKind[.accessToken] == 1)
    }

    /// `store(_:for:signIn:)` with the client-credentials grant files the same entry, checked alike.
    @Test func theGeneralStoreFilesAClientCredentialsResponseAsAnAppToken() throws {
        let group = try Fixtures.group()
        let cache = try Self.cache(group)
        try cache.store(try Self.response("at-general"), for: try Self.request(), signIn: true)
        #expect(try cache.appToken(for: Self.graph, authority: try Self.authority())?.token.secret == "at-general")
        #expect(try cache.accounts().isEmpty)
        #expect(try group.index().clientStates.isEmpty)
        let error = try #require(throws: TokenCacheError.self) {
            try cache.store(try Self.response(), for: try Self.request(tenant: "common"))
        }
        #expect(error.code == .invalidArgument)
    }

    /// A domain the group already resolved (a user signed in through it) names its tenant: the
    /// app token is filed under the tenant id, and both names find it.
    @Test func aKnownDomainIsFiledUnderItsTenantId() throws {
        let group = try Fixtures.group()
        let domain = "https://login.microsoftonline.com/contoso.onmicrosoft.com"
        try TokenCache(clientId: Fixtures.clientA, group: group).store(
            try Fixtures.response(), for: try Fixtures.request(authority: domain))
        let cache = try Self.cache(group)
        let request = TokenRequest(
            clientId: Self.daemon, authority: try Authority(domain), scopes: Self.graph,
            grantType: TokenCache.clientCredentialsGrant)
        let stored = try cache.storeAppToken(try Self.response("at-domain"), for: request)
        #expect(stored.realm == Fixtures.tenant)
        #expect(try cache.appToken(for: Self.graph, authority: try Authority(domain))?.token.secret == "at-domain")
        #expect(try cache.appToken(for: Self.graph, authority: try Self.authority())?.token.secret == "at-domain")
    }

    // MARK: - Every SDK's shape

    /// An app token as msal-python (`null`), msal-node (`""`, `login.windows.net`, its key shape)
    /// and .NET (no `home_account_id`, `ext_expires_on` beside `extended_expires_on`, no
    /// `token_type`) write it, one tenant each.
    static let foreignTenants = [
        "python": Fixtures.tenant, "node": Fixtures.guestTenant, "dotnet": "0b3c7c7e-0000-4000-8000-00000000000c",
    ]
    static let foreignCache = """
        {
            "AccessToken": {
                "-login.microsoftonline.com-accesstoken-55555555-aaaa-4bbb-8ccc-000000000005-72f988bf-86f1-41af-91ab-2d7cd011db47-https://graph.microsoft.com/.default": {
                    "credential_type": "AccessToken",
                    "secret": "at-python",
                    "home_account_id": null,
                    "environment": "login.microsoftonline.com",
                    "client_id": "55555555-aaaa-4bbb-8ccc-000000000005",
                    "target": "https://graph.microsoft.com/.default",
                    "realm": "72f988bf-86f1-41af-91ab-2d7cd011db47",
                    "token_type": "Bearer",
                    "cached_at": "1700000000",
                    "expires_on": "1700003599",
                    "extended_expires_on": "1700007199",
                    "refresh_on": "1700001800"
                },
                "-login.windows.net-accesstoken-55555555-aaaa-4bbb-8ccc-000000000005-f645ad92-e38d-4d1a-b510-d1b09a74a8ca-https://graph.microsoft.com/.default--": {
                    "homeAccountId": "",
                    "home_account_id": "",
                    "environment": "login.windows.net",
                    "credential_type": "AccessToken",
                    "client_id": "55555555-aaaa-4bbb-8ccc-000000000005",
                    "secret": "at-node",
                    "realm": "f645ad92-e38d-4d1a-b510-d1b09a74a8ca",
                    "target": "https://graph.microsoft.com/.default",
                    "cached_at": "1700000000",
                    "expires_on": "1700003599",
                    "extended_expires_on": "1700010798",
                    "token_type": "Bearer"
                },
                "-login.windows.net-accesstoken-55555555-aaaa-4bbb-8ccc-000000000005-0b3c7c7e-0000-4000-8000-00000000000c-https://graph.microsoft.com/.default": {
                    "environment": "login.windows.net",
                    "client_id": "55555555-aaaa-4bbb-8ccc-000000000005",
                    "secret": "at-dotnet",
                    "realm": "0b3c7c7e-0000-4000-8000-00000000000c",
                    "target": "https://graph.microsoft.com/.default",
                    "cached_at": "1700000000",
                    "expires_on": "1700003599",
                    "ext_expires_on": "1700007199",
                    "credential_type": "AccessToken"
                },
                "-login.microsoftonline.com-atext-55555555-aaaa-4bbb-8ccc-000000000005-72f988bf-86f1-41af-91ab-2d7cd011db47-api://resource/.default-duoy3x3ncdmnscth1ry0ymuvcdfs7r9avd2xfpwrxos": {
                    "credential_type": "AccessToken",
                    "secret": "at-fmi",
                    "home_account_id": null,
                    "environment": "login.microsoftonline.com",
                    "client_id": "55555555-aaaa-4bbb-8ccc-000000000005",
                    "target": "api://resource/.default",
                    "realm": "72f988bf-86f1-41af-91ab-2d7cd011db47",
                    "token_type": "Bearer",
                    "cached_at": "1700000000",
                    "expires_on": "1700003599",
                    "extended_expires_on": "1700007199",
                    "ext_cache_key": "duoy3x3ncdmnscth1ry0ymuvcdfs7r9avd2xfpwrxos"
                }
            }
        }
        """

    @Test(arguments: ["python", "node", "dotnet"])
    func everySDKsAppTokenShapeIsFound(sdk: String) throws {
        let group = try Fixtures.group(now: 1_700_000_100)
        try group.importMSAL(Array(Self.foreignCache.utf8))
        let cache = try Self.cache(group)
        let found = try #require(try cache.appToken(for: Self.graph, authority: try Self.authority(Self.foreignTenants[sdk]!)))
        #expect(found.token.secret == "at-\(sdk)")
        #expect(found.token.homeAccountId == nil)
        #expect(found.token.tokenType == "Bearer")
        #expect(found.token.extendedExpiresOn == (sdk == "node" ? 1_700_010_798 : 1_700_007_199))
        #expect(found.token.refreshOn == (sdk == "python" ? 1_700_001_800 : nil))
    }

    @Test func aTokenWithAnExtendedCacheKeyAnswersNoPlainLookup() throws {
        let group = try Fixtures.group(now: 1_700_000_100)
        try group.importMSAL(Array(Self.foreignCache.utf8))
        #expect(try Self.cache(group).appToken(for: ["api://resource/.default"], authority: try Self.authority()) == nil)
    }

    /// msal-python's extended cache key (`_compute_ext_cache_key`), as it printed these.
    @Test func theExtendedCacheKeyIsMsalPythons() {
        #expect(ExtendedCacheKey.of(["fmi_path": "SomeFmiPath/Path1"]) == "duoy3x3ncdmnscth1ry0ymuvcdfs7r9avd2xfpwrxos")
        #expect(
            ExtendedCacheKey.of(["fmi_path": "SomeFmiPath/FmiCredentialPath"]) == "cojvfy5tzae3njpkvcebguvvx5vvmnj8hphqrbogjoi")
        #expect(ExtendedCacheKey.of(["fmi_path": "agents/one", "x": "é"]) == "mfbqlzeodhsgxldnmxqtqqqgzb-z5iruvemmgfzcd0a")
        #expect(ExtendedCacheKey.of([:]) == nil)
        #expect(ExtendedCacheKey.of(["fmi_path": ""]) == nil)
    }

    @Test func aTokenWithAnExtendedCacheKeyAnswersOnlyItsComponents() throws {
        let group = try Fixtures.group(now: 1_700_000_100)
        try group.importMSAL(Array(Self.foreignCache.utf8))
        let cache = try Self.cache(group)
        let resource: Scopes = ["api://resource/.default"]
        // msal-python's fmi_path token, found with its path.
        let found = try cache.appToken(
            for: resource, authority: try Self.authority(), cacheKeyComponents: ["fmi_path": "SomeFmiPath/Path1"])
        #expect(found?.token.secret == "at-fmi")
        #expect(
            try cache.appToken(for: resource, authority: try Self.authority(), cacheKeyComponents: ["fmi_path": "Other"]) == nil)

        // Ours, stored with another path: filed as msal-python files it, beside the first.
        let stored = try cache.storeAppToken(
            try Self.response("at-ours-fmi", refreshIn: 1800),
            for: TokenRequest(
                clientId: Self.daemon, authority: try Self.authority(), scopes: resource,
                grantType: TokenCache.clientCredentialsGrant, cacheKeyComponents: ["fmi_path": "SomeFmiPath/FmiCredentialPath"]))
        #expect(stored.extCacheKey == "cojvfy5tzae3njpkvcebguvvx5vvmnj8hphqrbogjoi")
        #expect(
            stored.msalKey
                == "-login.microsoftonline.com-atext-\(Self.daemon)-\(Fixtures.tenant)-api://resource/.default-cojvfy5tzae3njpkvcebguvvx5vvmnj8hphqrbogjoi"
        )
        #expect(Array(stored.fields.keys.suffix(3)) == ["extended_expires_on", "ext_cache_key", "refresh_on"])
        for (path, secret) in [("SomeFmiPath/Path1", "at-fmi"), ("SomeFmiPath/FmiCredentialPath", "at-ours-fmi")] {
            #expect(
                try cache.appToken(for: resource, authority: try Self.authority(), cacheKeyComponents: ["fmi_path": path])?.token
                    .secret == secret)
        }
        // Neither answers a plain request.
        #expect(try cache.appToken(for: resource, authority: try Self.authority()) == nil)
    }

    /// An app token MSAL.NET stored with cache key components (`WithAdditionalCacheKeyComponents`):
    /// the components in `ext`, its own hash of them in the key, credential type `ATExt`.
    static let dotNetExtendedCache = """
        {
            "AccessToken": {
                "-login.windows.net-atext-\(daemon)-\(Fixtures.tenant)-api://resource/.default-2v76_xv1f6fbyo9vnb3piiodpqmijpag03wfsfjlu68": {
                    "environment": "login.windows.net",
                    "client_id": "\(daemon)",
                    "secret": "at-dotnet-fmi",
                    "credential_type": "ATExt",
                    "realm": "\(Fixtures.tenant)",
                    "target": "api://resource/.default",
                    "cached_at": "1700000000",
                    "expires_on": "1700003599",
                    "extended_expires_on": "1700007199",
                    "ext_expires_on": "1700007199",
                    "ext": {"fmi_path": "SomeFmiPath/Path1"}
                }
            }
        }
        """

    /// MSAL.NET's components are read as msal-python's: its token answers a request with the same
    /// components and no other, however the group filed it (a fresh import, an import into a
    /// group in use, a group opened from its store), and it exports as it came.
    @Test(arguments: OnBehalfOfTests.Filing.allCases)
    func dotNetsCacheKeyComponentsAreReadAsAnExtendedCacheKey(filing: OnBehalfOfTests.Filing) throws {
        let store = MemoryStore(name: "test")
        var group = try CacheGroup(name: "test", store: store, clock: { 1_700_000_100 })
        if filing == .importIntoUsedGroup {
            try Self.cache(group).storeAppToken(try Self.response("at-graph"), for: try Self.request())
        }
        try group.importMSAL(Array(Self.dotNetExtendedCache.utf8))
        if filing == .reopenedGroup { group = try CacheGroup(name: "test", store: store, clock: { 1_700_000_100 }) }
        let cache = try Self.cache(group)
        let resource: Scopes = ["api://resource/.default"]
        let found = try cache.appToken(
            for: resource, authority: try Self.authority(), cacheKeyComponents: ["fmi_path": "SomeFmiPath/Path1"])
        #expect(found?.token.secret == "at-dotnet-fmi", "\(filing)")
        #expect(found?.token.extCacheKey == ExtendedCacheKey.of(["fmi_path": "SomeFmiPath/Path1"]))
        #expect(
            try cache.appToken(for: resource, authority: try Self.authority(), cacheKeyComponents: ["fmi_path": "Other"]) == nil)
        #expect(try cache.appToken(for: resource, authority: try Self.authority()) == nil, "\(filing)")
        let partitions = try group.partitions().map(\.partition)
        #expect(
            partitions.contains(
                .app(clientId: Self.daemon, tenantId: Fixtures.tenant, extCacheKey: "duoy3x3ncdmnscth1ry0ymuvcdfs7r9avd2xfpwrxos")
            ))
        if filing != .importIntoUsedGroup {
            #expect(
                try group.exportMSAL(includeSecrets: true)
                    == JSONWriter.bytes(try JSONParser.parse(Array(Self.dotNetExtendedCache.utf8)), style: .python))
        }
    }

    /// Rule 1: what another SDK wrote is written back as it came, key and members.
    @Test func foreignAppTokensExportAsTheyCame() throws {
        let group = try Fixtures.group(now: 1_700_000_100)
        try group.importMSAL(Array(Self.foreignCache.utf8))
        let exported = try group.exportMSAL(includeSecrets: true)
        #expect(try MSALDocument.parse(exported).entryCount == 4)
        #expect(exported == JSONWriter.bytes(try JSONParser.parse(Array(Self.foreignCache.utf8)), style: .python))
    }

    // MARK: - msal-python's shape on export

    /// The exact bytes msal-python 1.39.0's `serialize()` writes after one client-credentials
    /// response with `refresh_in` (the real run is in `MSALPythonAppTokenTests`).
    @Test func exportIsWhatMsalPythonWrites() throws {
        let group = try Fixtures.group()
        try Self.cache(group).storeAppToken(try Self.response("at-1", refreshIn: 1800), for: try Self.request())
        let expected = """
            {
                "AccessToken": {
                    "-login.microsoftonline.com-accesstoken-55555555-aaaa-4bbb-8ccc-000000000005-72f988bf-86f1-41af-91ab-2d7cd011db47-https://graph.microsoft.com/.default": {
                        "credential_type": "AccessToken",
                        "secret": "at-1",
                        "home_account_id": null,
                        "environment": "login.microsoftonline.com",
                        "client_id": "55555555-aaaa-4bbb-8ccc-000000000005",
                        "target": "https://graph.microsoft.com/.default",
                        "realm": "72f988bf-86f1-41af-91ab-2d7cd011db47",
                        "token_type": "Bearer",
                        "cached_at": "1700000000",
                        "expires_on": "1700003599",
                        "extended_expires_on": "1700007199",
                        "refresh_on": "1700001800"
                    }
                },
                "AppMetadata": {
                    "appmetadata-login.microsoftonline.com-55555555-aaaa-4bbb-8ccc-000000000005": {
                        "client_id": "55555555-aaaa-4bbb-8ccc-000000000005",
                        "environment": "login.microsoftonline.com"
                    }
                }
            }
            """
        #expect(String(decoding: try group.exportMSAL(includeSecrets: true), as: UTF8.self) == expected)
    }

    // MARK: - Bad input stores nothing

    enum BadStore: String, CaseIterable {
        case noExpiresIn, commonTenant, organizationsTenant, consumersTenant, unknownDomain, notATenant, wrongGrant
        case refreshToken, idToken, clientInfo, emptyScopes, otherClient
    }

    @Test(arguments: BadStore.allCases)
    func badInputThrowsATypedErrorAndStoresNothing(_ bad: BadStore) throws {
        let group = try Fixtures.group()
        let cache = try Self.cache(group)
        var response = try Self.response()
        var request = try Self.request()
        let expected: TokenCacheError.Code
        switch bad {
        case .noExpiresIn:
            response = try Self.response(expiresIn: nil)
            expected = .malformedResponse
        case .commonTenant, .organizationsTenant, .consumersTenant:
            request.authority = try Self.authority(String(bad.rawValue.dropLast("Tenant".count)))
            expected = .invalidArgument
        case .unknownDomain:
            request.authority = try Self.authority("contoso.onmicrosoft.com")
            expected = .invalidArgument
        case .notATenant:
            request.authority = try Self.authority("72f988bf-86f1-41af-91ab-2d7cd011db4")
            expected = .invalidArgument
        case .wrongGrant:
            request.grantType = "authorization_code"
            expected = .invalidArgument
        case .refreshToken:
            response = try Self.response(extra: ["refresh_token": .string("rt")])
            expected = .malformedResponse
        case .idToken:
            response = try Self.response(extra: ["id_token": .string(Fixtures.jwt(["sub": .string("s")]))])
            expected = .malformedResponse
        case .clientInfo:
            response = try Self.response(extra: ["client_info": .string(Fixtures.clientInfo(uid: "u", utid: Fixtures.tenant))])
            expected = .malformedResponse
        case .emptyScopes:
            request.scopes = []
            expected = .invalidArgument
        case .otherClient:
            request.clientId = Fixtures.clientA
            expected = .invalidArgument
        }
        let generation = group.generation
        let error = try #require(throws: TokenCacheError.self) { try cache.storeAppToken(response, for: request) }
        #expect(error.code == expected, "\(bad): \(error)")
        #expect(!error.message.contains("at-app"))
        #expect(group.generation == generation)
        #expect(try group.index().count == 0)
    }

    @Test(arguments: ["common", "organizations", "consumers", "contoso.onmicrosoft.com", "not-a-tenant"])
    func aLookupForATenantThatIsNoTenantIdThrows(tenant: String) throws {
        let cache = try Self.cache(try Fixtures.group())
        let error = try #require(throws: TokenCacheError.self) {
            try cache.appToken(for: Self.graph, authority: try Self.authority(tenant))
        }
        #expect(error.code == .invalidArgument)
    }

    /// A tenant with a token for each of many resources: each lookup is answered by that
    /// resource's own token (found by its key), a token under another cloud alias's key by the
    /// scan, and a token under the key that is no app token (an OBO token msal-node stored on an
    /// empty account) never.
    @Test func aTenantWithManyResourcesAnswersEachLookupWithItsOwnToken() throws {
        func entry(_ secret: String, target: String, host: String = "login.microsoftonline.com", extra: String = "") -> String {
            """
            {"credential_type": "AccessToken", "secret": "\(secret)", "home_account_id": null, "environment": "\(host)",
             "client_id": "\(Self.daemon)", "target": "\(target)", "realm": "\(Fixtures.tenant)", "token_type": "Bearer",
             "cached_at": "1700000000", "expires_on": "1700003599", "extended_expires_on": "1700003599"\(extra)}
            """
        }
        func key(_ target: String, host: String = "login.microsoftonline.com") -> String {
            "-\(host)-accesstoken-\(Self.daemon)-\(Fixtures.tenant)-\(target)".lowercased()
        }
        var entries = (0..<2_000).map {
            "\"\(key("api://r\($0)/.default"))\": \(entry("at-\($0)", target: "api://r\($0)/.default"))"
        }
        entries.append(
            "\"\(key("api://dotnet/.default", host: "login.windows.net"))\": \(entry("at-dotnet", target: "api://dotnet/.default", host: "login.windows.net"))"
        )
        // The exact app key of api://obo, holding an OBO token; the app token sits under another key.
        entries.append(
            "\"\(key("api://obo/.default"))\": \(entry("at-obo-token", target: "api://obo/.default", extra: #", "userAssertionHash": "aGFzaA""#))"
        )
        entries.append("\"other-key\": \(entry("at-app-for-obo", target: "api://obo/.default"))")
        let group = try Fixtures.group(now: 1_700_000_100)
        try group.importMSAL(Array("{\"AccessToken\": {\(entries.joined(separator: ","))}}".utf8))
        let cache = try Self.cache(group)
        for number in stride(from: 0, to: 2_000, by: 97) {
            #expect(
                try cache.appToken(for: ["api://r\(number)/.default"], authority: try Self.authority())?.token.secret
                    == "at-\(number)")
        }
        #expect(try cache.appToken(for: ["API://R7/.default"], authority: try Self.authority())?.token.secret == "at-7")
        #expect(try cache.appToken(for: ["api://dotnet/.default"], authority: try Self.authority())?.token.secret == "at-dotnet")
        #expect(
            try cache.appToken(for: ["api://obo/.default"], authority: try Self.authority())?.token.secret == "at-app-for-obo")
        #expect(try cache.appToken(for: ["api://none/.default"], authority: try Self.authority()) == nil)
        // Asked again (the remembered answers): the same tokens.
        #expect(
            try cache.appToken(for: ["api://obo/.default"], authority: try Self.authority())?.token.secret == "at-app-for-obo")
        #expect(try cache.appToken(for: ["api://r97/.default"], authority: try Self.authority())?.token.secret == "at-97")
    }

    /// A remembered answer is forgotten when the group changes: a token deleted by another
    /// writer is not served again.
    @Test func aRememberedAnswerIsNotServedAfterTheGroupChanged() throws {
        let store = MemoryStore(name: "test")
        let cache = try Self.cache(try CacheGroup(name: "test", store: store, clock: { 1_700_000_000 }))
        let other = try CacheGroup(name: "test", store: store, clock: { 1_700_000_000 })
        try cache.storeAppToken(try Self.response("at-1"), for: try Self.request())
        #expect(try cache.appToken(for: Self.graph, authority: try Self.authority())?.token.secret == "at-1")
        #expect(try other.clear(.all).count == 2)
        #expect(try cache.appToken(for: Self.graph, authority: try Self.authority()) == nil)
    }

    @Test func aLookupWithoutScopesThrows() throws {
        let cache = try Self.cache(try Fixtures.group())
        let error = try #require(throws: TokenCacheError.self) { try cache.appToken(for: [], authority: try Self.authority()) }
        #expect(error.code == .invalidArgument)
    }

    @Test(arguments: [
        ("72f988bf-86f1-41af-91ab-2d7cd011db47", true), ("72F988BF-86F1-41AF-91AB-2D7CD011DB47", true),
        ("72f988bf86f141af91ab2d7cd011db47", false), ("72f988bf-86f1-41af-91ab-2d7cd011db4g", false),
        ("{72f988bf-86f1-41af-91ab-2d7cd011db47}", false), ("common", false), ("", false),
    ])
    func tenantIdsAreGUIDs(tenant: String, isId: Bool) {
        #expect(Authority.isTenantId(tenant) == isId)
    }
}
