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
    static func runMsalPython(_ authority: FakeAuthority, cacheIn: [UInt8]?) throws -> (results: [Result], cache: [UInt8]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stc-app-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var spec = Spec(cache_out: directory.appendingPathComponent("out.json").path)
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
                    clientId: Self.daemon, authority: try Authority(host: "login.microsoftonline.com", tenant: tenant),
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
}
