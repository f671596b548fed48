import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

/// App-only tokens both ways with real msal-python 1.39.0 `ConfidentialClientApplication`, against
/// the counting fake authority (`Tests/Support/msal_app_tokens.py`, `fake_authority.py`): what we
/// store is served by `acquire_token_for_client` without a token request, what msal-python
/// stored is found by ``TokenCache/appToken(for:authority:)``, and its cache exports byte for byte.
@Suite(.tags(.multiProcess), .timeLimit(.minutes(3))) struct MSALPythonAppTokenTests {
    static let daemon = "55555555-aaaa-4bbb-8ccc-000000000005"
    static let tenants = [Fixtures.tenant, Fixtures.guestTenant, "0b3c7c7e-0000-4000-8000-00000000000c"]
    static let resources = ["https://graph.microsoft.com/.default", "https://vault.azure.net/.default"]
    /// Every tenant with every resource.
    static let pairs = tenants.flatMap { tenant in resources.map { (tenant: tenant, scope: $0) } }

    struct Spec: Encodable {
        struct Request: Encodable {
            var tenant: String
            var scopes: [String]
            /// "client" (the default), "obo" or "code" (see `msal_app_tokens.py`).
            var kind: String?
            var assertion: String?
            var fmi_path: String?
            var code: String?
        }
        var client_id = MSALPythonAppTokenTests.daemon
        var cache_in: String?
        var cache_out: String
        var requests = MSALPythonAppTokenTests.pairs.map { Request(tenant: $0.tenant, scopes: [$0.scope]) }
    }

    struct Result: Decodable {
        var tenant: String
        var scopes: [String]
        var secret: String
        var token_source: String?
    }

    /// Runs msal-python's `acquire_token_for_client` for every pair; returns its answers and the
    /// bytes its cache serialized to.
    static func runMsalPython(_ authority: FakeAuthority, cacheIn: [UInt8]?, requests: [Spec.Request]? = nil) throws -> (
        results: [Result], cache: [UInt8]
    ) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stc-app-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var spec = Spec(cache_out: directory.appendingPathComponent("out.json").path)
        if let requests { spec.requests = requests }
        if let cacheIn {
            let input = directory.appendingPathComponent("in.json")
            try Data(cacheIn).write(to: input)
            spec.cache_in = input.path
        }
        let specURL = directory.appendingPathComponent("spec.json")
        try JSONEncoder().encode(spec).write(to: specURL)
        let output = try MSALPython.run(
            try MSALPython.interpreter(), ["msal_app_tokens.py", String(authority.port), specURL.path])
        struct Output: Decodable { var results: [Result] }
        let results = try JSONDecoder().decode(Output.self, from: Data(output.utf8)).results
        return (results, Array(try Data(contentsOf: URL(fileURLWithPath: spec.cache_out))))
    }

    static func clientCredentialsRequests(_ authority: FakeAuthority) async throws -> Int {
        try await authority.stats()["\(daemon) client_credentials"] ?? 0
    }

    /// A group on the real clock: msal-python stamps its entries with the time of the run.
    static func group() throws -> CacheGroup {
        try CacheGroup(name: "app", store: MemoryStore(name: "app"), clock: { Int64(Date().timeIntervalSince1970) })
    }

    @Test func msalPythonServesTheAppTokensWeStoredWithoutATokenRequest() async throws {
        let authority = try FakeAuthority()
        let group = try Self.group()
        let cache = try TokenCache(clientId: Self.daemon, group: group)
        var ours: [String: String] = [:]
        for (tenant, scope) in Self.pairs {
            let secret = "at-ours-\(tenant.prefix(8))-\(scope.contains("graph") ? "graph" : "vault")"
            try cache.storeAppToken(
                try TokenResponse(fields: [
                    "token_type": .string("Bearer"), "access_token": .string(secret), "expires_in": .number("3599"),
                    "ext_expires_in": .number("3599"), "refresh_in": .number("1800"),
                ]),
                for: TokenRequest(
                    clientId: Self.daemon, authority: Authority(host: "login.microsoftonline.com", tenant: tenant),
                    scopes: [scope], grantType: TokenCache.clientCredentialsGrant))
            ours["\(tenant) \(scope)"] = secret
        }
        let exported = try group.exportMSAL(includeSecrets: true)
        let (results, reserialized) = try Self.runMsalPython(authority, cacheIn: exported)

        #expect(results.count == 6)
        for result in results {
            let key = "\(result.tenant) \(result.scopes.joined(separator: " "))"
            #expect(result.secret == ours[key], "msal-python's answer for \(key)")
            #expect(result.token_source == "cache", "\(key)")
        }
        #expect(try await Self.clientCredentialsRequests(authority) == 0)
        // msal-python found nothing to change: its serialize() of our export is our export.
        #expect(reserialized == exported)
    }

    @Test func theAppTokensMsalPythonStoredAreFoundAndItsCacheExportsByteForByte() async throws {
        let authority = try FakeAuthority()
        try await authority.control(["refresh_in": 1800])
        let (results, built) = try Self.runMsalPython(authority, cacheIn: nil)
        #expect(results.allSatisfy { $0.token_source == "identity_provider" })
        #expect(try await Self.clientCredentialsRequests(authority) == 6)

        let group = try Self.group()
        try group.importMSAL(built)
        let cache = try TokenCache(clientId: Self.daemon, group: group)
        for result in results {
            let found = try #require(
                try cache.appToken(
                    for: Scopes(result.scopes), authority: try Authority(host: "login.microsoftonline.com", tenant: result.tenant)
                ))
            #expect(found.token.secret == result.secret, "\(result.tenant) \(result.scopes)")
            #expect(found.token.refreshOn == found.token.cachedAt.map { $0 + 1800 })
            #expect(!found.shouldRefresh)
        }
        #expect(Set(results.map(\.secret)).count == 6)
        #expect(try group.exportMSAL(includeSecrets: true) == built)
    }

    /// A web API's cache as msal-python builds it with every server flow: client credentials
    /// with `refresh_in`, an `fmi_path` token, on-behalf-of for two callers, and a web app's
    /// authorization code. Our export of it is msal-python's bytes; its hashless OBO tokens are
    /// its users' tokens, not anyone's OBO tokens; and msal-python keeps our OBO tokens intact.
    @Test func aCacheBuiltWithEveryServerFlowExportsByteForByteAndKeepsOBOApart() async throws {
        let authority = try FakeAuthority()
        try await authority.control(["refresh_in": 1800])
        let callers = ["carol", "erin"]
        let assertions = try callers.map { name in
            try UserAssertion(
                Fixtures.jwt([
                    "oid": .string("oid-\(name)"), "tid": .string(Fixtures.tenant),
                    "preferred_username": .string("\(name)@contoso.com"),
                ]))
        }
        let downstream = "api://downstream/Data.Read"
        var requests = Self.pairs.map { Spec.Request(tenant: $0.tenant, scopes: [$0.scope]) }
        requests.append(Spec.Request(tenant: Fixtures.tenant, scopes: ["api://resource/.default"], fmi_path: "SomeFmiPath/Path1"))
        for assertion in assertions {
            requests.append(Spec.Request(tenant: Fixtures.tenant, scopes: [downstream], kind: "obo", assertion: assertion.jwt))
        }
        requests.append(Spec.Request(tenant: Fixtures.tenant, scopes: ["User.Read"], kind: "code", code: "dave"))
        let (results, built) = try Self.runMsalPython(authority, cacheIn: nil, requests: requests)
        #expect(results.count == 10 && results.allSatisfy { $0.token_source == "identity_provider" })

        let group = try Self.group()
        try group.importMSAL(built)
        #expect(try group.exportMSAL(includeSecrets: true) == built)

        let cache = try TokenCache(clientId: Self.daemon, group: group)
        let authorityURL = Authority(host: "login.microsoftonline.com", tenant: Fixtures.tenant)
        #expect(try cache.appToken(for: ["api://resource/.default"], authority: authorityURL) == nil)
        for (number, name) in callers.enumerated() {
            // msal-python wrote no assertion hash: not an OBO token for anyone...
            #expect(try cache.onBehalfOfToken(for: [downstream], assertion: assertions[number], authority: authorityURL) == nil)
            // ...but the user's token, which msal-python's acquire_token_silent serves too.
            let account = try #require(try cache.account(username: "\(name)@contoso.com"))
            #expect(try cache.accessToken(for: [downstream], account: account)?.token.secret == results[7 + number].secret)
        }
        let dave = try #require(try cache.account(username: "dave@contoso.com"))
        #expect(try cache.accessToken(for: ["User.Read"], account: dave)?.token.secret == results[9].secret)

        // Our OBO token for carol's assertion: served for it alone, and kept by msal-python.
        let ours = try cache.storeOnBehalfOfToken(
            try TokenResponse(fields: [
                "token_type": .string("Bearer"), "access_token": .string("at-ours-obo"), "expires_in": .number("3599"),
                "scope": .string(downstream),
            ]),
            for: TokenRequest(
                clientId: Self.daemon, authority: authorityURL, scopes: [downstream], grantType: TokenCache.onBehalfOfGrant),
            assertion: assertions[0])
        #expect(ours.userAssertionHash == assertions[0].hash)
        #expect(
            try cache.onBehalfOfToken(for: [downstream], assertion: assertions[0], authority: authorityURL)?.token.secret
                == "at-ours-obo")
        #expect(try cache.onBehalfOfToken(for: [downstream], assertion: assertions[1], authority: authorityURL) == nil)
        let exported = try group.exportMSAL(includeSecrets: true)
        let before = try await Self.clientCredentialsRequests(authority)
        let (again, reserialized) = try Self.runMsalPython(authority, cacheIn: exported)
        #expect(again.allSatisfy { $0.token_source == "cache" })
        #expect(try await Self.clientCredentialsRequests(authority) == before)
        #expect(reserialized == exported)

        // fmi_path: msal-python's token is found with its path; ours, stored with another path, is
        // what msal-python's acquire_token_for_client(fmi_path=...) serves, with no request.
        let resource: Scopes = ["api://resource/.default"]
        #expect(
            try cache.appToken(for: resource, authority: authorityURL, cacheKeyComponents: ["fmi_path": "SomeFmiPath/Path1"])?
                .token.secret == results[6].secret)
        try cache.storeAppToken(
            try TokenResponse(fields: [
                "token_type": .string("Bearer"), "access_token": .string("at-ours-fmi"), "expires_in": .number("3599"),
            ]),
            for: TokenRequest(
                clientId: Self.daemon, authority: authorityURL, scopes: resource, grantType: TokenCache.clientCredentialsGrant,
                cacheKeyComponents: ["fmi_path": "Ours/Path"]))
        let (fmi, _) = try Self.runMsalPython(
            authority, cacheIn: try group.exportMSAL(includeSecrets: true),
            requests: [Spec.Request(tenant: Fixtures.tenant, scopes: resource.values, fmi_path: "Ours/Path")])
        #expect(fmi.map(\.secret) == ["at-ours-fmi"] && fmi.allSatisfy { $0.token_source == "cache" })
        #expect(try await Self.clientCredentialsRequests(authority) == before)
    }
}
