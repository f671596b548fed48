import Testing

@testable import SecureTokenCache

/// On-behalf-of tokens: served only for the assertion they were redeemed from, every SDK's way of
/// storing the assertion hash found, msal-python's hashless OBO tokens kept as plain user tokens,
/// and bad input that stores nothing.
@Suite(.timeLimit(.minutes(1))) struct OnBehalfOfTests {
    static let webAPI = "66666666-aaaa-4bbb-8ccc-000000000006"
    static let downstream: Scopes = ["api://downstream/Data.Read"]
    static let alice = "00000000-0000-0000-1111-000000000001"
    static let bob = "00000000-0000-0000-1111-000000000002"

    /// The bearer token a caller sent the web API (only its bytes and `tid` matter here).
    static func assertion(_ caller: String, tenant: String? = Fixtures.tenant) throws -> UserAssertion {
        var claims: JSONObject = ["oid": .string(caller), "aud": .string("api://web-api"), "scp": .string("access")]
        if let tenant { claims["tid"] = .string(tenant) }
        return try UserAssertion(Fixtures.jwt(claims))
    }

    static func authority(_ tenant: String = Fixtures.tenant) throws -> Authority {
        try Authority("https://login.microsoftonline.com/\(tenant)")
    }

    static func request(_ scopes: Scopes = downstream, tenant: String = Fixtures.tenant) throws -> TokenRequest {
        TokenRequest(clientId: webAPI, authority: try authority(tenant), scopes: scopes, grantType: TokenCache.onBehalfOfGrant)
    }

    /// An OBO answer as Entra ID sends it when the web API asks for `openid profile offline_access`
    /// too: the downstream token, the user's id token and client_info, and a refresh token.
    static func response(_ secret: String, user: String = alice) throws -> TokenResponse {
        try Fixtures.response(
            uid: user, accessToken: secret, refreshToken: "rt-\(secret)", scope: "api://downstream/Data.Read openid profile")
    }

    static func cache(_ group: CacheGroup) throws -> TokenCache { try TokenCache(clientId: webAPI, group: group) }

    // MARK: - The assertion

    /// The hash of the assertion `server-caches.md` computes for every SDK: MSAL.NET's, without
    /// the padding Go adds.
    @Test func theAssertionHashIsMSALNETs() throws {
        let assertion = try UserAssertion("eyJhbGciOiJub25lIn0.eyJvaWQiOiJ1MSJ9.")
        #expect(assertion.hash == "mE3PxTLwW99wMuxBMZVXlrUFn-AKt5rPdcX53yPqyrE")
        #expect(assertion.tenantId == nil)
        #expect(try Self.assertion(Self.alice).tenantId == Fixtures.tenant)
    }

    @Test(arguments: ["", "opaque-token", "a.b", "a.b.c.d", "eyJhbGciOiJub25lIn0.bm90IGpzb24.", ".eyJvaWQiOiJ1MSJ9."])
    func anAssertionThatIsNotAJWTThrows(text: String) throws {
        let error = try #require(throws: TokenCacheError.self) { try UserAssertion(text) }
        #expect(error.code == .invalidArgument)
        #expect(text.isEmpty || !error.message.contains(text))
    }

    // MARK: - Lookup and store

    @Test func aTokenIsServedOnlyForTheAssertionItWasRedeemedFrom() throws {
        let group = try Fixtures.group()
        let cache = try Self.cache(group)
        let mine = try Self.assertion(Self.alice)
        try cache.storeOnBehalfOfToken(try Self.response("at-obo"), for: try Self.request(), assertion: mine)

        let found = try #require(
            try cache.onBehalfOfToken(for: Self.downstream, assertion: mine, authority: try Self.authority()))
        #expect(found.token.secret == "at-obo")
        #expect(found.token.userAssertionHash == mine.hash)
        #expect(found.token.homeAccountId?.rawValue == "\(Self.alice).\(Fixtures.tenant)")
        // Another caller (even another token of the same user), another tenant or client: none.
        #expect(
            try cache.onBehalfOfToken(
                for: Self.downstream, assertion: try Self.assertion(Self.bob), authority: try Self.authority()) == nil)
        let sameUserAgain = try UserAssertion(
            Fixtures.jwt(["oid": .string(Self.alice), "tid": .string(Fixtures.tenant), "nonce": .string("2")]))
        #expect(try cache.onBehalfOfToken(for: Self.downstream, assertion: sameUserAgain, authority: try Self.authority()) == nil)
        #expect(
            try cache.onBehalfOfToken(for: Self.downstream, assertion: mine, authority: try Self.authority(Fixtures.guestTenant))
                == nil)
        let other = try TokenCache(clientId: Fixtures.clientA, group: group)
        #expect(try other.onBehalfOfToken(for: Self.downstream, assertion: mine, authority: try Self.authority()) == nil)
        // Not a user's token for silent lookups, and not an app token.
        let account = try #require(
            try cache.group.index().primaryAccount(HomeAccountId("\(Self.alice).\(Fixtures.tenant)").normalised))
        #expect(try cache.accessToken(for: Self.downstream, account: account) == nil)
        #expect(try cache.appToken(for: Self.downstream, authority: try Self.authority()) == nil)
    }

    /// MSAL.NET's choice: the refresh token of an OBO answer is not kept (a refresh token filed
    /// under the user would serve any caller); the user's account and id token are.
    @Test func theRefreshTokenIsNotKeptAndTheAccountIs() throws {
        let group = try Fixtures.group()
        try Self.cache(group).storeOnBehalfOfToken(
            try Self.response("at-obo"), for: try Self.request(), assertion: try Self.assertion(Self.alice))
        let counts = try group.index().countByKind
        #expect(counts[.accessToken] == 1)
        #expect((counts[.refreshToken] ?? 0) == 0)
        #expect(counts[.idToken] == 1)
        #expect(counts[.account] == 1)
        #expect(!String(decoding: try group.exportMSAL(includeSecrets: true), as: UTF8.self).contains("rt-at-obo"))
    }

    /// Two callers of one user, same scopes: two tokens under two keys (MSAL.NET's keys would
    /// collide, msal-dotnet#4673); storing again for one assertion replaces only its token.
    @Test func twoAssertionsOfOneUserKeepTwoTokens() throws {
        let group = try Fixtures.group()
        let cache = try Self.cache(group)
        let first = try Self.assertion(Self.alice)
        let second = try UserAssertion(
            Fixtures.jwt(["oid": .string(Self.alice), "tid": .string(Fixtures.tenant), "n": .number("2")]))
        try cache.storeOnBehalfOfToken(try Self.response("at-1"), for: try Self.request(), assertion: first)
        try cache.storeOnBehalfOfToken(try Self.response("at-2"), for: try Self.request(), assertion: second)
        try cache.storeOnBehalfOfToken(try Self.response("at-1b"), for: try Self.request(), assertion: first)
        #expect(try group.index().countByKind[.accessToken] == 2)
        #expect(
            try cache.onBehalfOfToken(for: Self.downstream, assertion: first, authority: try Self.authority())?.token.secret
                == "at-1b")
        #expect(
            try cache.onBehalfOfToken(for: Self.downstream, assertion: second, authority: try Self.authority())?.token.secret
                == "at-2")
    }

    /// A multi-tenant authority stands for the assertion's tenant, on store and on lookup.
    @Test func aMultiTenantAuthorityMeansTheAssertionsTenant() throws {
        let group = try Fixtures.group()
        let cache = try Self.cache(group)
        let guest = try Self.assertion(Self.alice, tenant: Fixtures.guestTenant)
        let stored = try cache.storeOnBehalfOfToken(
            try Fixtures.response(uid: Self.alice, tenant: Fixtures.guestTenant, accessToken: "at-guest", scope: nil),
            for: try Self.request(tenant: "organizations"), assertion: guest)
        #expect(stored.realm == Fixtures.guestTenant)
        #expect(
            try cache.onBehalfOfToken(for: Self.downstream, assertion: guest, authority: try Self.authority("organizations"))?
                .token.secret == "at-guest")
        #expect(
            try cache.onBehalfOfToken(for: Self.downstream, assertion: guest, authority: try Self.authority(Fixtures.guestTenant))
                != nil)
        #expect(try cache.onBehalfOfToken(for: Self.downstream, assertion: guest, authority: try Self.authority()) == nil)

        let tenantless = try Self.assertion(Self.bob, tenant: nil)
        let error = try #require(throws: TokenCacheError.self) {
            try cache.onBehalfOfToken(for: Self.downstream, assertion: tenantless, authority: try Self.authority("common"))
        }
        #expect(error.code == .invalidArgument)
    }

    @Test func aSignOutOfTheUserRemovesItsOnBehalfOfTokens() throws {
        let group = try Fixtures.group()
        let cache = try Self.cache(group)
        let mine = try Self.assertion(Self.alice)
        try cache.storeOnBehalfOfToken(try Self.response("at-obo"), for: try Self.request(), assertion: mine)
        let account = try #require(try group.index().primaryAccount(HomeAccountId("\(Self.alice).\(Fixtures.tenant)").normalised))
        try cache.signOut(account)
        #expect(try cache.onBehalfOfToken(for: Self.downstream, assertion: mine, authority: try Self.authority()) == nil)
    }

    @Test func expiryAndRefreshOnAreHonoured() throws {
        let clock = TestClock()
        let group = try CacheGroup(name: "test", store: MemoryStore(name: "test"), clock: clock.closure)
        let cache = try Self.cache(group)
        let start = clock.now
        let mine = try Self.assertion(Self.alice)
        try cache.storeOnBehalfOfToken(
            try Fixtures.response(
                uid: Self.alice, accessToken: "at-obo", scope: "api://downstream/Data.Read", expiresIn: 3600,
                extra: ["refresh_in": .number("1800")]),
            for: try Self.request(), assertion: mine)
        clock.now = start + 1799
        #expect(
            try cache.onBehalfOfToken(for: Self.downstream, assertion: mine, authority: try Self.authority())?.shouldRefresh
                == false)
        clock.now = start + 1800
        #expect(
            try cache.onBehalfOfToken(for: Self.downstream, assertion: mine, authority: try Self.authority())?.shouldRefresh
                == true)
        clock.now = start + 3600 - 301
        #expect(try cache.onBehalfOfToken(for: Self.downstream, assertion: mine, authority: try Self.authority()) != nil)
        clock.now = start + 3600 - 300
        #expect(try cache.onBehalfOfToken(for: Self.downstream, assertion: mine, authority: try Self.authority()) == nil)
    }

    // MARK: - Every SDK's shape

    /// An OBO access token as MSAL.NET (`user_assertion_hash`), Go (the same, padded) and
    /// msal-node (`userAssertionHash`, on a `""` account) write it, one caller each; and one
    /// msal-python wrote (no hash: a plain user token).
    static func foreignCache(hashes: [String: String]) -> String {
        func token(_ sdk: String, member: String, hash: String, account: String) -> String {
            """
            "\(account)-login.windows.net-accesstoken-66666666-aaaa-4bbb-8ccc-000000000006-\(Fixtures.tenant)-api://downstream/data.read-\(sdk)": {
                "home_account_id": "\(account)", "environment": "login.windows.net", "credential_type": "AccessToken",
                "client_id": "66666666-aaaa-4bbb-8ccc-000000000006", "secret": "at-\(sdk)", "realm": "\(Fixtures.tenant)",
                "target": "api://downstream/Data.Read", "cached_at": "1700000000", "expires_on": "1700003599",
                "extended_expires_on": "1700007199", "\(member)": "\(hash)"
            }
            """
        }
        let user = "\(alice).\(Fixtures.tenant)"
        return """
            {"AccessToken": {
            \(token("dotnet", member: "user_assertion_hash", hash: hashes["dotnet"]!, account: user)),
            \(token("go", member: "user_assertion_hash", hash: hashes["go"]!, account: user)),
            \(token("node", member: "userAssertionHash", hash: hashes["node"]!, account: "")),
            "\(user)-login.microsoftonline.com-accesstoken-66666666-aaaa-4bbb-8ccc-000000000006-\(Fixtures.tenant)-api://downstream/data.read": {
                "credential_type": "AccessToken", "secret": "at-python", "home_account_id": "\(user)",
                "environment": "login.microsoftonline.com", "client_id": "66666666-aaaa-4bbb-8ccc-000000000006",
                "target": "api://downstream/Data.Read", "realm": "\(Fixtures.tenant)", "token_type": "Bearer",
                "cached_at": "1700000000", "expires_on": "1700003599", "extended_expires_on": "1700007199"
            }},
            "Account": {"\(user)-login.microsoftonline.com-\(Fixtures.tenant)": {
                "home_account_id": "\(user)", "environment": "login.microsoftonline.com", "realm": "\(Fixtures.tenant)",
                "local_account_id": "\(alice)", "username": "alice@contoso.com", "authority_type": "MSSTS"
            }}}
            """
    }

    /// The callers of `foreignCache`, and the hash each SDK stored for its caller.
    static func foreignCallers() throws -> (assertions: [String: UserAssertion], document: String) {
        var assertions: [String: UserAssertion] = [:]
        var hashes: [String: String] = [:]
        for (number, sdk) in ["dotnet", "go", "node"].enumerated() {
            let assertion = try UserAssertion(
                Fixtures.jwt(["oid": .string(alice), "tid": .string(Fixtures.tenant), "caller": .number(String(number))]))
            assertions[sdk] = assertion
            // Go pads its Base64; the others write it as computed.
            hashes[sdk] = sdk == "go" ? assertion.hash + "=" : assertion.hash
        }
        return (assertions, foreignCache(hashes: hashes))
    }

    enum Filing: String, CaseIterable { case importIntoEmptyGroup, importIntoUsedGroup, reopenedGroup }

    @Test(arguments: Filing.allCases)
    func everySDKsHashIsFoundForItsCallerOnly(filing: Filing) throws {
        let (assertions, document) = try Self.foreignCallers()
        let store = MemoryStore(name: "test")
        var group = try CacheGroup(name: "test", store: store, clock: { 1_700_000_100 })
        if filing == .importIntoUsedGroup {
            try TokenCache(clientId: Fixtures.clientA, group: group).store(
                try Fixtures.response(uid: Self.bob), for: try Fixtures.request())
        }
        try group.importMSAL(Array(document.utf8))
        if filing == .reopenedGroup { group = try CacheGroup(name: "test", store: store, clock: { 1_700_000_100 }) }
        let cache = try Self.cache(group)
        for (sdk, assertion) in assertions {
            let found = try cache.onBehalfOfToken(for: Self.downstream, assertion: assertion, authority: try Self.authority())
            #expect(found?.token.secret == "at-\(sdk)", "\(sdk), \(filing)")
        }
        #expect(
            try cache.onBehalfOfToken(
                for: Self.downstream, assertion: try Self.assertion(Self.bob), authority: try Self.authority()) == nil)
        // msal-python's hashless OBO token is the user's, as msal-python's silent flow finds it;
        // the hashed ones are not.
        let account = try #require(try group.index().primaryAccount(HomeAccountId("\(Self.alice).\(Fixtures.tenant)").normalised))
        #expect(try cache.accessToken(for: Self.downstream, account: account)?.token.secret == "at-python")
        // msal-node's `""` account makes it no app token.
        #expect(try cache.appToken(for: Self.downstream, authority: try Self.authority()) == nil)
        // Every entry imported stays one entry.
        #expect(
            try MSALDocument.parse(try group.exportMSAL(includeSecrets: true)).entryCount
                == (filing == .importIntoUsedGroup ? 5 + 5 : 5))
    }

    /// Rule 1 for OBO tokens: an export holds each foreign entry as it came, hash member and all.
    @Test func foreignOnBehalfOfTokensExportAsTheyCame() throws {
        let (_, document) = try Self.foreignCallers()
        let group = try Fixtures.group(now: 1_700_000_100)
        try group.importMSAL(Array(document.utf8))
        #expect(
            try group.exportMSAL(includeSecrets: true)
                == JSONWriter.bytes(try JSONParser.parse(Array(document.utf8)), style: .python))
    }

    /// What we write is found again after an export and an import into another group.
    @Test func anExportedOnBehalfOfTokenIsFoundAfterImport() throws {
        let group = try Fixtures.group()
        let mine = try Self.assertion(Self.alice)
        try Self.cache(group).storeOnBehalfOfToken(try Self.response("at-obo"), for: try Self.request(), assertion: mine)
        let exported = try group.exportMSAL(includeSecrets: true)
        #expect(String(decoding: exported, as: UTF8.self).contains(#""user_assertion_hash": "\#(mine.hash)""#))
        let other = try Fixtures.group(name: "other")
        try other.importMSAL(exported)
        #expect(
            try Self.cache(other).onBehalfOfToken(for: Self.downstream, assertion: mine, authority: try Self.authority())?.token
                .secret == "at-obo")
    }

    /// Opening a group files OBO tokens in one pass; filing them one by one must agree.
    @Test func aBulkBuiltIndexFilesOnBehalfOfTokensLikeOneBuiltEntryByEntry() throws {
        let (assertions, document) = try Self.foreignCallers()
        let group = try Fixtures.group(now: 1_700_000_100)
        try group.importMSAL(Array(document.utf8))
        try Self.cache(group).storeOnBehalfOfToken(
            try Self.response("at-ours"), for: try Self.request(), assertion: try Self.assertion(Self.bob))
        let records = try group.index().documentOrder().map(RecordCodec.record)
        let bulk = try RecordCodec.build(records)
        var single = Index()
        for record in records { try RecordCodec.apply(record, to: &single) }
        var all = assertions
        all["ours"] = try Self.assertion(Self.bob)
        for (name, assertion) in all {
            let bucket = AccessTokenBucket(
                account: UserAssertion.key(of: assertion.hash)!, environment: Environment("login.windows.net").groupKey,
                realm: HashedString(Fixtures.tenant), client: HashedString(Self.webAPI), tokenType: .bearer, extCacheKey: .empty)
            let fromBulk = bulk.onBehalfOfAccessToken(in: bucket, scopes: Self.downstream, now: 1_700_000_100)
            #expect(fromBulk != nil, "\(name)")
            #expect(fromBulk == single.onBehalfOfAccessToken(in: bucket, scopes: Self.downstream, now: 1_700_000_100), "\(name)")
        }
    }

    // MARK: - Bad input stores nothing

    enum BadStore: String, CaseIterable {
        case noExpiresIn, wrongGrant, emptyScopes, otherClient, tenantlessAssertionAtCommon
    }

    @Test(arguments: BadStore.allCases)
    func badInputThrowsATypedErrorAndStoresNothing(_ bad: BadStore) throws {
        let group = try Fixtures.group()
        let cache = try Self.cache(group)
        var response = try Self.response("at-bad")
        var request = try Self.request()
        var assertion = try Self.assertion(Self.alice)
        let expected: TokenCacheError.Code
        switch bad {
        case .noExpiresIn:
            var fields = response.fields
            fields["expires_in"] = nil
            response = try TokenResponse(fields: fields)
            expected = .malformedResponse
        case .wrongGrant:
            request.grantType = "authorization_code"
            expected = .invalidArgument
        case .emptyScopes:
            request.scopes = []
            expected = .invalidArgument
        case .otherClient:
            request.clientId = Fixtures.clientA
            expected = .invalidArgument
        case .tenantlessAssertionAtCommon:
            assertion = try Self.assertion(Self.alice, tenant: nil)
            request.authority = try Self.authority("common")
            expected = .invalidArgument
        }
        let generation = group.generation
        let error = try #require(throws: TokenCacheError.self) {
            try cache.storeOnBehalfOfToken(response, for: request, assertion: assertion)
        }
        #expect(error.code == expected, "\(bad): \(error)")
        #expect(!error.message.contains("at-bad"))
        #expect(!error.message.contains(assertion.jwt))
        #expect(group.generation == generation)
        #expect(try group.index().count == 0)
    }
}
