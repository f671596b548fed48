import Foundation
import Testing

@testable import SecureTokenCache

/// One test (or a few) per rule of "Our rules" in `cache-model.md`.
@Suite(.timeLimit(.minutes(1))) struct RulesTests {
    static let home = "https://login.microsoftonline.com/\(Fixtures.tenant)"
    static let guest = "https://login.microsoftonline.com/\(Fixtures.guestTenant)"
    static let alice = "00000000-0000-0000-1111-000000000001"
    static let bob = "00000000-0000-0000-2222-000000000002"

    static func signIn(
        _ cache: TokenCache, uid: String = alice, tenant: String = Fixtures.tenant, username: String = "Alice@Contoso.com",
        at: String, rt: String? = "rt", scope: String, authority: String = home, expiresIn: Int = 3600, foci: String? = nil,
        extra: JSONObject = [:], signIn: Bool = true
    ) throws -> Account {
        try cache.store(
            try Fixtures.response(
                uid: uid, tenant: tenant, username: username, accessToken: at, refreshToken: rt, scope: scope,
                expiresIn: expiresIn,
                foci: foci, extra: extra),
            for: try Fixtures.request(client: cache.clientId, authority: authority, scopes: Scopes(target: scope)), signIn: signIn
        )
        return try #require(try cache.account(identifier: "\(uid).\(tenant)"))
    }

    // MARK: Rule 1: read everything, index by fields, keep unknown fields and sections

    /// Keys as the Apple SDK, MSAL Go and MSAL .NET shape them, timestamps as JSON numbers,
    /// `ext_expires_on`, `IDToken`, unknown fields and an unknown section.
    static let foreignCache = """
        {
          "AccessToken": {
            "apple|00000000-0000-0000-1111-000000000001.72f988bf-86f1-41af-91ab-2d7cd011db47-login.windows.net|accesstoken-11111111-aaaa-4bbb-8ccc-000000000001-72f988bf-86f1-41af-91ab-2d7cd011db47-user.read": {
              "credential_type": "accesstoken", "secret": "at-foreign", "home_account_id": "00000000-0000-0000-1111-000000000001.72f988bf-86f1-41af-91ab-2d7cd011db47",
              "environment": "login.windows.net", "client_id": "11111111-AAAA-4bbb-8ccc-000000000001", "target": "user.read",
              "realm": "72F988BF-86f1-41af-91ab-2d7cd011db47", "cached_at": 1700000000, "expires_on": 1700003600, "ext_expires_on": 1700007200,
              "enrollment_id": "enr-1", "ext": {"nested": [1, 2.50, true, null]}
            }
          },
          "RefreshToken": {
            "go-refresh-token-key": {
              "credential_type": "RefreshToken", "secret": "rt-foreign", "home_account_id": "00000000-0000-0000-1111-000000000001.72f988bf-86f1-41af-91ab-2d7cd011db47",
              "environment": "login.windows.net", "client_id": "11111111-aaaa-4bbb-8ccc-000000000001", "last_modification_time": 1700000000,
              "user_assertion_hash": ""
            }
          },
          "IdToken": {
            "go-id-token-key": {
              "credential_type": "IDToken", "secret": "x.y.z", "home_account_id": "00000000-0000-0000-1111-000000000001.72f988bf-86f1-41af-91ab-2d7cd011db47",
              "environment": "login.windows.net", "realm": "72f988bf-86f1-41af-91ab-2d7cd011db47", "client_id": "11111111-aaaa-4bbb-8ccc-000000000001"
            }
          },
          "Account": {
            "apple-account-key": {
              "home_account_id": "00000000-0000-0000-1111-000000000001.72f988bf-86f1-41af-91ab-2d7cd011db47", "environment": "login.windows.net",
              "realm": "72f988bf-86f1-41af-91ab-2d7cd011db47", "local_account_id": "00000000-0000-0000-1111-000000000001",
              "username": "alice@contoso.com", "authority_type": "MSSTS", "name": "Alice", "alternative_account_id": "alt-1",
              "last_modification_app": "com.example.mail"
            }
          },
          "AppMetadata": {},
          "DotnetExtraSection": {"schema": 3, "values": ["a", "\\u00e9"]}
        }
        """

    @Test func rule1ForeignKeyShapesAreReadByFields() throws {
        let group = try Fixtures.group()
        #expect(try group.importMSAL(Array(Self.foreignCache.utf8)) == 4)
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        let alice = try #require(try cache.account(username: "ALICE@contoso.com"))
        #expect(alice.name == "Alice")
        #expect(try cache.accounts().map(\.username) == ["alice@contoso.com"], "visible through the foreign refresh token")
        // login.microsoftonline.com finds login.windows.net; numbers read as timestamps.
        let hit = try #require(try cache.accessToken(for: ["User.Read"], account: alice, authority: try Authority(Self.home)))
        #expect(hit.token.secret == "at-foreign")
        #expect(hit.token.expiresOn == 1_700_003_600)
        #expect(hit.token.extendedExpiresOn == 1_700_007_200, "ext_expires_on where extended_expires_on is missing")
        #expect(hit.token.tokenType == "Bearer", "a missing token_type means Bearer")
        #expect(try cache.refreshTokens(for: alice).map(\.secret) == ["rt-foreign"])
    }

    @Test func rule1ForeignEntriesAreUpdatedInPlaceAndUnknownFieldsSurvive() throws {
        let group = try Fixtures.group()
        try group.importMSAL(Array(Self.foreignCache.utf8))
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        // A new token for the same account, cloud, tenant, client and scopes.
        _ = try Self.signIn(
            cache, at: "at-new", rt: "rt-new", scope: "User.Read openid profile",
            authority: "https://login.windows.net/\(Fixtures.tenant)")
        guard case .object(let document) = try JSONParser.parse(try group.exportMSAL(includeSecrets: true)) else {
            Issue.record("the export is not an object")
            return
        }
        func section(_ name: String) -> JSONObject {
            if case .object(let entries)? = document[name] { return entries }
            return [:]
        }
        func entry(_ name: String, _ key: String) -> JSONObject? {
            if case .object(let fields)? = section(name)[key] { return fields }
            return nil
        }
        #expect(section("AccessToken").count == 1, "updated in place, not forked (msal-python forks: S8)")
        let atKey = try #require(section("AccessToken").keys.first)
        #expect(atKey.hasPrefix("apple|"))
        let at = try #require(entry("AccessToken", atKey))
        #expect(at.string("secret") == "at-new")
        #expect(at["enrollment_id"] == .string("enr-1"), "unknown fields survive the update")
        // Numbers are written as msal-python's json.dumps would print them (2.50 reads as 2.5).
        #expect(at["ext"] == .object(["nested": .array([.number("1"), .number("2.5"), .bool(true), .null])]))
        #expect(at["ext_expires_on"] == nil, "a field the engine owns does not outlive the token it described")
        #expect(section("RefreshToken").keys == ["go-refresh-token-key"])
        #expect(entry("RefreshToken", "go-refresh-token-key")?.string("secret") == "rt-new")
        #expect(
            entry("RefreshToken", "go-refresh-token-key")?.string("user_assertion_hash") == "",
            "an empty assertion hash (no on-behalf-of session) survives on a user's token")
        #expect(section("IdToken").keys == ["go-id-token-key"])
        #expect(section("Account").keys == ["apple-account-key"])
        let account = try #require(entry("Account", "apple-account-key"))
        #expect(account.string("alternative_account_id") == "alt-1")
        #expect(account.string("last_modification_app") == "com.example.mail")
        #expect(account.string("name") == "Alice")
        #expect(
            document["DotnetExtraSection"] == .object(["schema": .number("3"), "values": .array([.string("a"), .string("é")])]))
        let text = String(decoding: try group.exportMSAL(includeSecrets: true), as: UTF8.self)
        #expect(text.contains(#""\u00e9""#), "written back as msal-python writes it (ASCII escapes)")
        // The same answer again: every entry under another SDK's key is what it holds already.
        let (generation, ids) = (group.generation, try group.index().documentOrder().map(\.id))
        _ = try Self.signIn(
            cache, at: "at-new", rt: "rt-new", scope: "User.Read openid profile",
            authority: "https://login.windows.net/\(Fixtures.tenant)")
        #expect(group.generation == generation, "no change to commit")
        #expect(try group.index().documentOrder().map(\.id) == ids)
    }

    // MARK: Rule 2: case-insensitive scopes; openid, profile, offline_access ignored

    @Test func rule2ScopeMatchingIsCaseInsensitiveAndIgnoresOIDCScopes() throws {
        let group = try Fixtures.group()
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        let alice = try Self.signIn(cache, at: "at-1", scope: "Mail.Read User.Read openid profile")
        let home = try Authority(Self.home)
        for asked: Scopes in [["user.read"], ["USER.READ", "mail.read"], ["User.Read", "openid", "profile", "offline_access"]] {
            #expect(try cache.accessToken(for: asked, account: alice, authority: home)?.token.secret == "at-1", "\(asked)")
        }
        #expect(try cache.accessToken(for: ["User.Read", "Calendars.Read"], account: alice, authority: home) == nil)
    }

    // MARK: Rule 3: realm = id-token tid; common/organizations/consumers → home tenant

    @Test func rule3RealmIsTheIdTokenTenantAndMultiTenantAuthoritiesMeanTheHomeTenant() throws {
        let group = try Fixtures.group()
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        let alice = try Self.signIn(
            cache, at: "at-common", scope: "User.Read", authority: "https://login.microsoftonline.com/common")
        let stored = try #require(
            try group.index().documentOrder().compactMap { if case .accessToken(let t) = $0.entry { t } else { nil } }.first)
        #expect(stored.realm == Fixtures.tenant, "the realm is the id token's tid, not 'common'")
        #expect(alice.realm == Fixtures.tenant)
        for tenant in ["common", "organizations", Fixtures.tenant] {
            let authority = try Authority("https://login.microsoftonline.com/\(tenant)")
            #expect(
                try cache.accessToken(for: ["User.Read"], account: alice, authority: authority)?.token.secret == "at-common",
                "\(tenant)")
        }
        #expect(
            try cache.accessToken(for: ["User.Read"], account: alice, authority: try Authority(Self.guest)) == nil,
            "another tenant is another realm")

        // A personal account: /consumers resolves to the consumers tenant id.
        let msa = "9188040d-6c67-4c5b-b112-36a304b66dad"
        let dave = try Self.signIn(
            cache, uid: "00000000-0000-0000-4444-000000000004", tenant: msa, username: "dave@outlook.com", at: "at-dave",
            scope: "User.Read",
            authority: "https://login.microsoftonline.com/consumers")
        #expect(dave.realm == msa)
        let consumers = try Authority("https://login.microsoftonline.com/consumers")
        #expect(try cache.accessToken(for: ["User.Read"], account: dave, authority: consumers)?.token.secret == "at-dave")
    }

    /// A user signed in as a guest in another tenant first, then in their home tenant, has one
    /// account entry per tenant. The one that stands for them is the home tenant's, whatever the
    /// order.
    @Test func rule3TheHomeTenantProfileStandsForTheAccount() throws {
        let group = try Fixtures.group()
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        let guestIdToken = Fixtures.jwt([
            "oid": .string("00000000-0000-0000-9999-0000000000aa"), "tid": .string(Fixtures.guestTenant), "sub": .string("s"),
            "preferred_username": .string("Alice@Contoso.com"),
        ])
        try cache.store(
            try Fixtures.response(accessToken: "at-guest", scope: "User.Read", extra: ["id_token": .string(guestIdToken)]),
            for: try Fixtures.request(authority: Self.guest))
        let asGuest = try #require(try cache.accounts().first)
        #expect(asGuest.realm == Fixtures.guestTenant, "the only profile so far")
        _ = try Self.signIn(cache, at: "at-home", scope: "User.Read")

        let home = try group.index().tenantProfiles(asGuest.homeAccountId.normalised)
        #expect(Set(home.map(\.realm)) == [Fixtures.guestTenant, Fixtures.tenant])
        let accounts = try cache.accounts()
        #expect(accounts.count == 1)
        #expect(accounts.first?.realm == Fixtures.tenant)
        #expect(try cache.account(identifier: asGuest.homeAccountId.rawValue.uppercased())?.realm == Fixtures.tenant)
    }

    @Test func rule3TokensOtherSDKsStoredUnderTheLiteralCommonRealmAreFound() throws {
        // msal-python stores realm "common" for a /common authority (S2); the engine finds it.
        let group = try Fixtures.group()
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        let alice = try Self.signIn(cache, at: "at-home", scope: "User.Read")
        try group.importMSAL(
            Array(
                """
                {"AccessToken": {"k": {"credential_type": "AccessToken", "secret": "at-literal-common", "home_account_id": "\(Self.alice).\(Fixtures.tenant)",
                "environment": "login.microsoftonline.com", "client_id": "\(Fixtures.clientA)", "target": "Files.Read", "realm": "common",
                "token_type": "Bearer", "cached_at": "1700000000", "expires_on": "1700003600", "extended_expires_on": "1700003600"}}}
                """.utf8))
        let common = try Authority("https://login.microsoftonline.com/common")
        #expect(
            try cache.accessToken(for: ["Files.Read"], account: alice, authority: common)?.token.secret == "at-literal-common")
        #expect(
            try cache.accessToken(for: ["User.Read"], account: alice, authority: common)?.token.secret == "at-home",
            "the home tenant first")
    }

    // MARK: Rule 4: saving an access token replaces tokens whose scopes intersect

    @Test func rule4SavingReplacesIntersectingTokensOfTheSameBucketOnly() throws {
        let group = try Fixtures.group()
        let a = try TokenCache(clientId: Fixtures.clientA, group: group)
        let b = try TokenCache(clientId: Fixtures.clientB, group: group)
        let alice = try Self.signIn(a, at: "at-mail-user", scope: "Mail.Read User.Read openid profile")
        _ = try Self.signIn(a, at: "at-files", scope: "Files.Read")
        // Same scopes in another tenant (Alice as a guest), another client, another token type: untouched.
        let guestIdToken = Fixtures.jwt([
            "oid": .string("00000000-0000-0000-9999-0000000000aa"), "tid": .string(Fixtures.guestTenant), "sub": .string("s"),
            "preferred_username": .string("Alice@Contoso.com"),
        ])
        try a.store(
            try Fixtures.response(accessToken: "at-guest", scope: "User.Read", extra: ["id_token": .string(guestIdToken)]),
            for: try Fixtures.request(client: Fixtures.clientA, authority: Self.guest, scopes: ["User.Read"]), signIn: false)
        _ = try Self.signIn(b, at: "at-b-user", scope: "User.Read")
        try a.store(
            try Fixtures.response(accessToken: "ssh-1", scope: "User.Read", extra: ["token_type": .string("ssh-cert")]),
            for: TokenRequest(
                clientId: Fixtures.clientA, authority: try Authority(Self.home), scopes: ["User.Read"], keyId: "k1"),
            signIn: false)

        // The replacement: User.Read Calendars.Read intersects "Mail.Read User.Read" (and the
        // token above that replaced it) but not Files.Read.
        _ = try Self.signIn(a, at: "at-user-cal", scope: "User.Read Calendars.Read")
        let secrets = try group.index().documentOrder().compactMap {
            if case .accessToken(let t) = $0.entry { t.secret } else { nil }
        }
        #expect(Set(secrets) == ["at-files", "at-guest", "at-b-user", "ssh-1", "at-user-cal"])
        let home = try Authority(Self.home)
        #expect(try a.accessToken(for: ["Mail.Read"], account: alice, authority: home) == nil, "the replaced token is gone")
        #expect(
            try a.accessToken(for: ["user.read", "calendars.read"], account: alice, authority: home)?.token.secret
                == "at-user-cal")
        #expect(
            try a.accessToken(for: ["User.Read"], account: alice, authority: home, tokenType: "ssh-cert")?.token.secret == "ssh-1"
        )
    }

    // MARK: Rule 5: own refresh token first, then the family's; client_mismatch → family_id ""

    @Test func rule5OwnRefreshTokenFirstThenFamilyAndClientMismatchStopsFamilyUse() throws {
        let group = try Fixtures.group()
        let a = try TokenCache(clientId: Fixtures.clientA, group: group)
        let b = try TokenCache(clientId: Fixtures.clientB, group: group)
        let c = try TokenCache(clientId: Fixtures.clientC, group: group)
        let carol = try Self.signIn(a, at: "at-a", rt: "frt-a", scope: "User.Read", foci: "1")
        // B has no app metadata yet: it may use the family token (family "1" assumed).
        #expect(try b.refreshTokens(for: carol).map(\.secret) == ["frt-a"])
        #expect(try b.accounts().map(\.username) == ["Alice@Contoso.com"], "family SSO")
        // A client that gets a non-family token of its own uses only that one.
        _ = try Self.signIn(b, at: "at-b", rt: "rt-b-own", scope: "Calendars.Read", signIn: false)
        #expect(try b.refreshTokens(for: carol).map(\.secret) == ["rt-b-own"])
        // client_mismatch: the client records family_id "" and stops offering the family token.
        #expect(try c.refreshTokens(for: carol).map(\.secret) == ["frt-a"])
        try c.recordNotInFamily(environment: Environment("login.microsoftonline.com"))
        #expect(try c.refreshTokens(for: carol).isEmpty)
        #expect(try c.accounts().isEmpty)
        let metadata = try group.index().appMetadata(client: Fixtures.clientC, environment: nil)
        if case .appMetadata(let entry)? = metadata?.entry {
            #expect(entry.fields.string("family_id") == "")
        } else {
            Issue.record("no AppMetadata for C")
        }
        // A family member with its own token too: own first, family second.
        let d = try TokenCache(clientId: "77777777-aaaa-4bbb-8ccc-000000000007", group: group)
        _ = try Self.signIn(d, at: "at-d", rt: "rt-d-own", scope: "Tasks.Read", foci: "1", signIn: false)
        #expect(try d.refreshTokens(for: carol).map(\.secret) == ["rt-d-own", "frt-a"])
    }

    // MARK: Rule 6: per-client sign-out keeps other clients' SSO; wipe removes for everyone

    @Test func rule6SignOutIsPerClientAndWipeIsForEveryClient() throws {
        let group = try Fixtures.group()
        let a = try TokenCache(clientId: Fixtures.clientA, group: group)
        let b = try TokenCache(clientId: Fixtures.clientB, group: group)
        let alice = try Self.signIn(a, at: "at-a", rt: "frt", scope: "User.Read", foci: "1")
        _ = try Self.signIn(b, at: "at-b", rt: "frt-b", scope: "Calendars.Read", foci: "1")
        #expect(try a.currentAccount().current?.homeAccountId == alice.homeAccountId)

        try a.signOut(alice)
        #expect(try a.accounts().isEmpty, "hidden from A")
        #expect(try a.isSignedOut(alice))
        #expect(try a.accessToken(for: ["User.Read"], account: alice, authority: try Authority(Self.home)) == nil)
        #expect(try a.currentAccount().current == nil)
        #expect(try b.accounts().map(\.username) == ["Alice@Contoso.com"], "B keeps its SSO (msal-python removes it: S6, S7)")
        #expect(
            try b.accessToken(for: ["Calendars.Read"], account: alice, authority: try Authority(Self.home))?.token.secret
                == "at-b")
        #expect(!(try b.refreshTokens(for: alice).isEmpty), "the family token stays for the family's other apps")

        _ = try Self.signIn(a, at: "at-a2", rt: "frt2", scope: "User.Read", foci: "1")
        #expect(try a.accounts().count == 1, "signing in again shows the account again")

        #expect(try group.wipe(alice) > 0)
        #expect(try a.accounts().isEmpty && b.accounts().isEmpty)
        #expect(try group.index().entries(account: alice.homeAccountId.normalised).isEmpty)
    }

    // MARK: Rule 7: lookups are pure reads; expired tokens go on writes and compaction

    @Test func rule7LookupsArePureReadsAndExpiredTokensArePurgedOnWrites() throws {
        let clock = TestClock(1_700_000_000)
        let group = try CacheGroup(name: "rule7", store: MemoryStore(name: "rule7"), clock: clock.closure)
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        let alice = try Self.signIn(
            cache, at: "at-short", scope: "User.Read", expiresIn: 600, extra: ["refresh_in": .number("60")])
        let home = try Authority(Self.home)
        #expect(try cache.accessToken(for: ["User.Read"], account: alice, authority: home)?.shouldRefresh == false)
        clock.now += 60
        #expect(
            try cache.accessToken(for: ["User.Read"], account: alice, authority: home)?.shouldRefresh == true, "refresh_on passed"
        )
        clock.now = 1_700_000_000 + 600 - 300
        #expect(try cache.accessToken(for: ["User.Read"], account: alice, authority: home) == nil, "300 s margin")
        clock.now = 1_700_000_000 + 601
        let before = try group.exportMSAL(includeSecrets: true)
        let generation = group.generation
        #expect(try cache.accessToken(for: ["User.Read"], account: alice, authority: home) == nil)
        #expect(try group.exportMSAL(includeSecrets: true) == before, "a lookup deletes nothing (msal-python's search() does)")
        #expect(group.generation == generation, "a lookup writes nothing")
        #expect(try group.purgeExpiredAccessTokens() == 1)
        #expect(try group.statistics().countByKind[.accessToken] == nil)
    }

    // MARK: Rule 8: export is byte-compatible with msal-python's serialize()

    @Test func rule8ExportUsesMsalPythonsKeysAndFormat() throws {
        let group = try Fixtures.group()
        let cache = try TokenCache(clientId: "33333333-AAAA-4BBB-8CCC-000000000003", group: group)
        try cache.store(
            try Fixtures.response(accessToken: "at", refreshToken: "rt", scope: "User.Read email openid profile"),
            for: TokenRequest(
                clientId: "33333333-AAAA-4BBB-8CCC-000000000003", authority: try Authority(Self.home), scopes: ["User.Read"],
                grantType: "authorization_code"))
        let text = String(decoding: try group.exportMSAL(includeSecrets: true), as: UTF8.self)
        let hid = "\(Self.alice).\(Fixtures.tenant)"
        for key in [
            "\(hid)-login.microsoftonline.com-accesstoken-33333333-aaaa-4bbb-8ccc-000000000003-\(Fixtures.tenant)-user.read email openid profile",
            "\(hid)-login.microsoftonline.com-\(Fixtures.tenant)",
            "\(hid)-login.microsoftonline.com-idtoken-33333333-aaaa-4bbb-8ccc-000000000003-\(Fixtures.tenant)-",
            "\(hid)-login.microsoftonline.com-refreshtoken-33333333-aaaa-4bbb-8ccc-000000000003--user.read email openid profile",
            "appmetadata-login.microsoftonline.com-33333333-AAAA-4BBB-8CCC-000000000003",
        ] {
            #expect(text.contains("\"\(key)\": {"), "\(key)")
        }
        #expect(text.hasPrefix("{\n    \"AccessToken\": {\n        \""))
        #expect(!text.hasSuffix("\n"), "json.dumps writes no trailing newline")
        #expect(text.contains(#""target": "User.Read email openid profile""#), "sorted by code point, case kept")
        #expect(try JSONParser.parse(Array(text.utf8)) == JSONParser.parse(try group.exportMSAL(includeSecrets: true)))
    }
}
