import Testing

@testable import SecureTokenCache

/// Partitions: every entry in the partition MSAL.NET names its cache key after, whichever SDK
/// wrote it; listing, filtering and clearing by partition; and a partition that is gone once
/// its last entry is.
@Suite(.timeLimit(.minutes(1))) struct CachePartitionTests {
    static let daemon = AppTokenTests.daemon
    static let bobHome = "\(OnBehalfOfTests.bob).\(Fixtures.tenant)"

    /// A group holding every SDK's app tokens (`AppTokenCache`), every SDK's on-behalf-of tokens,
    /// a token msal-python stored for a web API's user, and a desktop sign-in.
    static func group() throws -> (CacheGroup, assertions: [String: UserAssertion]) {
        let group = try Fixtures.group(now: 1_700_000_100)
        try group.importMSAL(Array(AppTokenTests.foreignCache.utf8))
        let (assertions, document) = try OnBehalfOfTests.foreignCallers()
        try group.importMSAL(Array(document.utf8))
        // A tenantless app token, as an SDK writes one for an authority without a tenant.
        try group.importMSAL(
            Array(
                """
                {"AccessToken": {"-login.microsoftonline.com-accesstoken-\(daemon)--api://tenantless/.default": {
                    "credential_type": "AccessToken", "secret": "at-tenantless", "environment": "login.microsoftonline.com",
                    "client_id": "\(daemon)", "realm": "", "target": "api://tenantless/.default",
                    "cached_at": "1700000000", "expires_on": "1700003599"}}}
                """.utf8))
        try TokenCache(clientId: Fixtures.clientA, group: group).store(
            try Fixtures.response(uid: OnBehalfOfTests.bob), for: try Fixtures.request())
        return (group, assertions)
    }

    @Test func everyEntryIsInThePartitionMSALNETNamesItsCacheKeyAfter() throws {
        let (group, assertions) = try Self.group()
        let app = { (tenant: String) in "\(Self.daemon)_\(tenant)_AppTokenCache" }
        let expected: [(GroupEntry.Holder, String, entries: Int, refreshTokens: Int)] = [
            (.user, "\(OnBehalfOfTests.alice).\(Fixtures.tenant)", 2, 0),
            (.user, Self.bobHome, 4, 1),
            (.app, app("0b3c7c7e-0000-4000-8000-00000000000c"), 1, 0),
            (.app, app(Fixtures.tenant), 1, 0),
            (.app, app("\(Fixtures.tenant)_duoy3x3ncdmnscth1ry0ymuvcdfs7r9avd2xfpwrxos"), 1, 0),
            (.app, "\(Self.daemon)__AppTokenCache", 1, 0),
            (.app, app(Fixtures.guestTenant), 1, 0),
        ]
        let partitions = try group.partitions()
        #expect(partitions.filter { $0.partition.holder != .onBehalfOf }.map(\.partition.key) == expected.map(\.1))
        for (holder, key, entries, refreshTokens) in expected {
            let summary = try #require(partitions.first { $0.partition.key == key })
            #expect(summary.partition.holder == holder)
            #expect(summary.entryCount == entries)
            #expect(summary.refreshTokenCount == refreshTokens)
        }
        // The on-behalf-of partitions are the assertion hashes, the Go SDK's padded one included,
        // and the public constructors name the same partitions.
        let onBehalfOf = partitions.filter { $0.partition.holder == .onBehalfOf }.map(\.partition)
        #expect(Set(onBehalfOf) == Set(assertions.values.map { CachePartition.onBehalfOf($0) }))
        #expect(onBehalfOf.allSatisfy { !$0.key.hasSuffix("=") })
        #expect(partitions.contains { $0.partition == .app(clientId: Self.daemon, tenantId: Fixtures.tenant) })
        #expect(partitions.contains { $0.partition == .user(HomeAccountId(Self.bobHome)) })
        // Each entry says its partition; app metadata belongs to none.
        for entry in try group.entries() {
            #expect((entry.partition == nil) == (entry.kind == .appMetadata))
            #expect(entry.partition?.holder == entry.holder || entry.kind == .idToken || entry.kind == .account)
        }
    }

    @Test func aFilterByPartitionReturnsThatPartitionsEntriesOnly() throws {
        let (group, assertions) = try Self.group()
        let bob = try group.entries(.init(partition: Self.bobHome.uppercased()))
        #expect(bob.count == 4)
        #expect(bob.allSatisfy { $0.homeAccountId?.rawValue == Self.bobHome })
        let goKey = try #require(assertions["go"]).hash + "="
        let go = try group.entries(.init(partition: goKey))
        #expect(go.map(\.fields).compactMap { $0.string("secret") } == ["at-go"])
        #expect(try group.entries(.init(partition: "\(Self.daemon)_nowhere_AppTokenCache")).isEmpty)
    }

    @Test func aClearedPartitionIsGoneAndNothingElseIs() throws {
        let (group, assertions) = try Self.group()
        let before = try group.partitions()
        let appKey = "\(Self.daemon)_\(Fixtures.tenant)_AppTokenCache"
        let removed = try group.clear(.partition(appKey))
        #expect(removed.map { $0.fields.string("secret") } == ["at-python"])
        // The extended-key partition of the same tenant is another partition: it stays.
        #expect(try group.partitions().map(\.partition) == before.map(\.partition).filter { $0.key != appKey })

        // An on-behalf-of partition named the Go SDK's way.
        let go = try #require(assertions["go"])
        #expect(try group.clear(.partition(go.hash + "=")).count == 1)
        #expect(try !group.partitions().contains { $0.partition == .onBehalfOf(go) })

        // A user's partition: every entry of the user, and every client forgets them.
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        #expect(try cache.accounts().map(\.homeAccountId.rawValue) == [Self.bobHome])
        #expect(try group.clear(.partition(Self.bobHome)).count == 4)
        #expect(try cache.accounts().isEmpty)
        #expect(try group.entries(.init(partition: "\(OnBehalfOfTests.alice).\(Fixtures.tenant)")).count == 2)

        // A key that names nothing changes nothing.
        let left = try group.exportMSAL(includeSecrets: true)
        let error = try #require(throws: TokenCacheError.self) { try group.clear(.partition("no-such-partition")) }
        #expect(error.code == .notFound)
        #expect(try group.exportMSAL(includeSecrets: true) == left)
    }

    /// A long-running on-behalf-of session's refresh token is in its session's partition whichever
    /// SDK's member names the session, as the index files it; a user's own token, or one whose
    /// member is empty, is in its user's.
    @Test func aSessionsRefreshTokenIsInThePartitionTheIndexFilesItBy() throws {
        func refreshToken(_ extra: JSONObject) -> RefreshToken {
            var fields: JSONObject = [
                "credential_type": .string("RefreshToken"), "secret": .string("rt"), "home_account_id": .string(Self.bobHome),
                "environment": .string("login.microsoftonline.com"), "client_id": .string(Fixtures.clientA),
            ]
            for (name, value) in extra.members { fields[name] = value }
            return RefreshToken(fields: fields)
        }
        for (member, stored, key) in [
            ("user_assertion_hash", "Xk9-Session_Key==", "Xk9-Session_Key"), ("userAssertionHash", "nodeSession", "nodeSession"),
        ] {
            let token = refreshToken([member: .string(stored)])
            let partition = try #require(CachePartition(of: .refreshToken(token)))
            #expect(partition.holder == .onBehalfOf)
            #expect(partition.key == key)
            let filedBy = try #require(token.assertionKey)
            #expect(partition.storageKey == CachePartition.onBehalfOf(key: filedBy).storageKey)
        }
        for extra: JSONObject in [[:], ["user_assertion_hash": .string("")]] {
            #expect(CachePartition(of: .refreshToken(refreshToken(extra))) == .user(HomeAccountId(Self.bobHome)))
        }
    }

    /// A partition's storage key lowers its key as `lowercased()` does, letters past ASCII too:
    /// it names the partition in a database, so it must not change with how it is computed.
    @Test func aStorageKeyLowersTheKeyAsLowercasedDoes() {
        for key in ["Bob.Tenant", "bob.tenant", "ÄRZTE.Tenant", "İstanbul.Ωmega", ""] {
            #expect(CachePartition.user(HomeAccountId(key)).storageKey == "user \(key.lowercased())")
        }
        let app = CachePartition.app(clientId: "C1", tenantId: "T1")
        #expect(app.storageKey == "app c1_t1_apptokencache")
    }

    /// MSAL.NET's `HasTokens`, by which a distributed cache node is deleted: a refresh token, or
    /// an access token valid for 300 s more.
    @Test func aPartitionHasTokensWhileARefreshTokenOrAFreshAccessTokenIsLeft() throws {
        let (group, _) = try Self.group()
        let partitions = try group.partitions()
        let bob = try #require(partitions.first { $0.partition.key == Self.bobHome })
        let app = try #require(partitions.first { $0.partition.holder == .app })
        let expiry = try #require(app.latestExpiry)
        #expect(app.hasTokens(at: expiry - 301))
        #expect(!app.hasTokens(at: expiry - 300))
        #expect(bob.hasTokens(at: .max / 2))
    }
}
