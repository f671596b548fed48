import Foundation
import Testing

@testable import SecureTokenCache

/// ADAL for Python caches for the migration tests: written by the real adal package
/// (`Tests/Support/adal_build_cache.py`) against the fake authority, or by hand.
enum ADALSupport {
    /// Azure CLI's client id, the app whose ADAL caches users actually have.
    static let azureCLI = "04b07795-8ddb-461a-bbee-02f9e1bf7b46"
    static let arm = "https://management.core.windows.net/"
    static let graph = "https://graph.microsoft.com"

    /// One sign-in for adal to make: `username` in `client` for `resource` at `tenant`.
    struct Token: Sendable {
        var client: String = ADALSupport.azureCLI
        var username: String
        var resource: String
        var tenant: String = "common"
    }

    /// What adal 1.2.7's `TokenCache.serialize()` wrote after signing `tokens` in, in order,
    /// against `authority` (password grants, and MRRT refreshes where adal chose them).
    static func buildCache(_ tokens: [Token], authority: FakeAuthority) async throws -> [UInt8] {
        let port = authority.port
        return try await offPool { try buildCache(tokens, port: port) }
    }

    /// Runs blocking work (a Python child process) on a Dispatch thread: blocking one of the
    /// cooperative pool's few threads stalls every other async test, timing tests included.
    static func offPool<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Swift.Result { try work() }) }
        }
    }

    private static func buildCache(_ tokens: [Token], port: Int) throws -> [UInt8] {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("stc-adal-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: out) }
        var arguments = ["adal_build_cache.py", "--port", String(port), "--out", out.path]
        for token in tokens {
            arguments += ["--token", [token.client, token.username, token.resource, token.tenant].joined(separator: ",")]
        }
        try MSALPython.run(try MSALPython.interpreter(), arguments)
        return Array(try Data(contentsOf: out))
    }

    /// A hand-written ADAL entry (what adal writes, with placeholders for the tokens).
    static func entry(
        client: String = azureCLI,
        authority: String = "https://login.microsoftonline.com/\(Fixtures.tenant)",
        userId: String? = "Alice@Contoso.com",
        resource: String = graph,
        accessToken: String? = "adal-at-secret",
        refreshToken: String? = "adal-rt-secret",
        expiresOn: String = localTime(secondsFromNow: 3000),
        tenantId: String? = Fixtures.tenant
    ) -> [String: Any] {
        var entry: [String: Any] = [
            "tokenType": "Bearer", "expiresIn": 3599, "resource": resource, "expiresOn": expiresOn,
            "oid": "00000000-0000-0000-0000-00000000a11c", "givenName": "Alice", "familyName": "Tester",
            "isUserIdDisplayable": true, "isMRRT": true, "_clientId": client, "_authority": authority,
        ]
        if let userId { entry["userId"] = userId }
        if let accessToken { entry["accessToken"] = accessToken }
        if let refreshToken { entry["refreshToken"] = refreshToken }
        if let tenantId { entry["tenantId"] = tenantId }
        return entry
    }

    /// `json.dumps` of a list of entries.
    static func cache(_ entries: [[String: Any]]) throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: entries))
    }

    /// ADAL's `str(datetime.now() + timedelta(seconds:))`: local naive time with microseconds.
    static func localTime(secondsFromNow seconds: Int) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone.current
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSSSSS"
        return formatter.string(from: Date(timeIntervalSinceNow: TimeInterval(seconds)))
    }
}
