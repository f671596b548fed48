import Testing

@testable import SecureTokenCache

/// Malformed token responses and malformed caches are rejected with a clear
/// `TokenCacheError` and change nothing.
@Suite(.timeLimit(.minutes(1))) struct MalformedInputTests {
    static let good: JSONObject = {
        var fields: JSONObject = [
            "token_type": .string("Bearer"), "scope": .string("User.Read openid profile"), "expires_in": .number("3600"),
            "ext_expires_in": .number("3600"), "access_token": .string("at-good"), "refresh_token": .string("rt-good"),
            "client_info": .string(Fixtures.clientInfo(uid: "00000000-0000-0000-1111-000000000001", utid: Fixtures.tenant)),
        ]
        fields["id_token"] = .string(
            Fixtures.jwt([
                "oid": .string("00000000-0000-0000-1111-000000000001"), "tid": .string(Fixtures.tenant),
                "preferred_username": .string("alice@contoso.com"), "sub": .string("s"),
            ]))
        return fields
    }()

    static func with(_ changes: JSONObject) -> JSONObject {
        var fields = good
        for (key, value) in changes { fields[key] = value }
        return fields
    }

    /// Each case: a name, the response, and words the message must contain.
    static let responses: [(String, JSONObject, String)] = [
        ("no access token", with(["access_token": .null]), "access_token"),
        ("empty access token", with(["access_token": .string("")]), "access_token"),
        ("access token not a string", with(["access_token": .number("12")]), "access_token"),
        ("id token with two parts", with(["id_token": .string("eyJhbGciOiJub25lIn0.eyJzdWIiOiJzIn0")]), "id_token"),
        ("id token not base64url", with(["id_token": .string("a.b*c.d")]), "id_token"),
        ("id token payload not JSON", with(["id_token": .string("a.\(Base64URL.encode(Array("not json".utf8))).c")]), "id_token"),
        ("id token payload not an object", with(["id_token": .string("a.\(Base64URL.encode(Array("[1]".utf8))).c")]), "id_token"),
        ("id token not a string", with(["id_token": .bool(true)]), "id_token"),
        ("client_info not base64url", with(["client_info": .string("eyJ1aWQiOi*")]), "client_info"),
        ("client_info not JSON", with(["client_info": .string(Base64URL.encode(Array("uid=1".utf8)))]), "client_info"),
        ("client_info a JSON string", with(["client_info": .string(Base64URL.encode(Array(#""x""#.utf8)))]), "client_info"),
        ("expires_in not numeric", with(["expires_in": .string("soon")]), "expires_in"),
        ("expires_in a fraction string", with(["expires_in": .string("3600.5")]), "expires_in"),
        ("expires_in a boolean", with(["expires_in": .bool(true)]), "expires_in"),
        ("expires_in overflowing", with(["expires_in": .string("9223372036854775807")]), "expires_in"),
        ("expires_on overflowing", with(["expires_in": .null, "expires_on": .number("-9223372036854775808")]), "expires_on"),
        ("ext_expires_in not numeric", with(["ext_expires_in": .string("later")]), "ext_expires_in"),
        ("refresh_in not numeric", with(["refresh_in": .array([])]), "refresh_in"),
    ]

    @Test(arguments: responses.indices)
    func malformedResponseIsRejectedAndChangesNothing(case index: Int) throws {
        let (name, fields, field) = Self.responses[index]
        let group = try Fixtures.group()
        try group.importMSAL(try Fixtures.vector("v1_single_account"))
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        let before = try group.exportMSAL(includeSecrets: true)
        let generation = group.generation
        let request = try Fixtures.request()
        let error = try #require(throws: TokenCacheError.self, "\(name)") {
            try cache.store(try TokenResponse(fields: fields), for: request)
        }
        #expect(error.code == .malformedResponse, "\(name)")
        #expect(error.message.contains(field), "\(name): \(error.message)")
        #expect(error.message.contains("nothing was stored"), "\(name): \(error.message)")
        for secret in ["at-good", "rt-good", "eyJ"] {
            #expect(!error.message.contains(secret) && !error.description.contains(secret), "\(name): the message leaks a token")
        }
        #expect(try group.exportMSAL(includeSecrets: true) == before, "\(name): the cache changed")
        #expect(group.generation == generation, "\(name): a transaction was committed")
    }

    @Test func theGoodResponseIsStored() throws {
        let group = try Fixtures.group()
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        try cache.store(try TokenResponse(fields: Self.good), for: try Fixtures.request())
        #expect(try cache.accounts().map(\.username) == ["alice@contoso.com"])
    }

    @Test(arguments: [
        ("not JSON", "{\"access_token\": "),
        ("not an object", "[\"access_token\"]"),
        ("trailing data", "{\"access_token\": \"a\"} x"),
    ])
    func unparsableResponseIsRejected(name: String, text: String) throws {
        let error = try #require(throws: TokenCacheError.self, "\(name)") { try TokenResponse(json: Array(text.utf8)) }
        #expect(error.code == .malformedResponse)
    }

    @Test(arguments: [
        ("not JSON", "{\"AccessToken\": {"),
        ("not an object", "[]"),
        ("a section that is not an object", "{\"AccessToken\": []}"),
        ("an entry that is not an object", "{\"Account\": {\"k\": \"v\"}}"),
        ("a later section broken", "{\"Account\": {}, \"RefreshToken\": {\"k\": 1}}"),
        ("invalid UTF-8", "{\"Account\": {\"k\": {\"username\": \"\u{FFFD}\"}}}"),
    ])
    func malformedCacheImportsNothing(name: String, text: String) throws {
        let group = try Fixtures.group()
        try group.importMSAL(try Fixtures.vector("v2_two_accounts_two_tenants"))
        let before = try group.exportMSAL(includeSecrets: true)
        var bytes = Array(text.utf8)
        if name == "invalid UTF-8", let position = bytes.firstIndex(of: 0xEF) {
            bytes.replaceSubrange(position..<position + 3, with: [0xC3, 0x28])
        }
        let error = try #require(throws: TokenCacheError.self, "\(name)") { try group.importMSAL(bytes) }
        #expect(error.code == .malformedCache, "\(name)")
        #expect(try group.exportMSAL(includeSecrets: true) == before, "\(name): the group changed")
    }
}
