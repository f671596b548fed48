import Foundation
import Testing

/// `list tokens` and `status` on a 10,000-token cache, whole process (target: under a second).
///
/// Timed in whatever configuration the tests were built in; the limits are for a release build
/// and are relaxed for a debug build, which is several times slower.
@Suite struct ScaleTests {
    static let tokenCount = 10_000

    /// An MSAL JSON cache with `count` access tokens for 100 users of one client, plus their
    /// accounts and refresh tokens.
    static func largeCache(count: Int = tokenCount) throws -> URL {
        let tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"
        let client = "11111111-aaaa-4bbb-8ccc-000000000001"
        var accessTokens: [String: Any] = [:]
        var accounts: [String: Any] = [:]
        var refreshTokens: [String: Any] = [:]
        for user in 0..<100 {
            let home = "00000000-0000-0000-0000-\(String(format: "%012d", user)).\(tenant)"
            accounts["\(home)-login.microsoftonline.com-\(tenant)"] = [
                "home_account_id": home, "environment": "login.microsoftonline.com", "realm": tenant,
                "local_account_id": "user-\(user)", "username": "user\(user)@contoso.com", "authority_type": "MSSTS",
            ]
            refreshTokens["\(home)-login.microsoftonline.com-refreshtoken-\(client)--"] = [
                "credential_type": "RefreshToken", "secret": "rt-\(user)", "home_account_id": home,
                "environment": "login.microsoftonline.com", "client_id": client,
            ]
        }
        for token in 0..<count {
            let home = "00000000-0000-0000-0000-\(String(format: "%012d", token % 100)).\(tenant)"
            let scope = "api://resource-\(token)/.default"
            accessTokens["\(home)-login.microsoftonline.com-accesstoken-\(client)-\(tenant)-\(scope)"] = [
                "credential_type": "AccessToken", "secret": "at-secret-\(token)", "home_account_id": home,
                "environment": "login.microsoftonline.com", "client_id": client, "target": scope, "realm": tenant,
                "token_type": "Bearer", "cached_at": "1700000000", "expires_on": String(2_000_000_000 + token),
            ]
        }
        let document: [String: Any] = ["AccessToken": accessTokens, "Account": accounts, "RefreshToken": refreshTokens]
        let url = try TestFiles.scratch().appendingPathComponent("large.json")
        try JSONSerialization.data(withJSONObject: document).write(to: url)
        return url
    }

    /// The issue's target (one second, whole process) holds for a release build. A debug build
    /// spends several seconds loading and indexing 10,000 records (4 s for `status` against a
    /// stand-in file store), so its limit only catches gross regressions.
    #if DEBUG
        static let limit = 15.0
    #else
        static let limit = 1.0
    #endif

    /// `--from` parses the whole file and imports it into a memory group first: library work
    /// that is quadratic in a section's size today (JSONParser files members through
    /// JSONObject's linear keyed setter), so this test uses 2,000 tokens and only guards
    /// against the CLI's own part regressing badly.
    static let fromFileTokens = 2_000
    #if DEBUG
        static let fromFileLimit = 10.0
    #else
        static let fromFileLimit = 2.0
    #endif

    static func timed(_ body: () throws -> Cachetool.Run) rethrows -> (Cachetool.Run, Double) {
        let start = Date()
        let run = try body()
        return (run, Date().timeIntervalSince(start))
    }

    @Test func listingALargeFile() throws {
        let file = try Self.largeCache(count: Self.fromFileTokens)
        let (run, seconds) = try Self.timed { try Cachetool.run(["list", "tokens", "--from", file.path]) }
        #expect(run.status == 0)
        #expect(run.stdout.split(separator: "\n").count == Self.fromFileTokens + 100 + 1)
        #expect(seconds < Self.fromFileLimit, "list tokens --from took \(seconds) s")
        print("list tokens --from (\(Self.fromFileTokens) access tokens, parse included): \(seconds) s")
    }

    @Test
    func listAndStatusOfATenThousandTokenGroup() throws {
        let folder = try TestFiles.scratch()
        let options = FileStore.options(folder)
        let imported = try Cachetool.run(["import", try Self.largeCache().path] + options, environment: FileStore.environment)
        try #require(imported.status == 0, "\(imported)")
        let (list, listSeconds) = try Self.timed {
            try Cachetool.run(["list", "tokens"] + options, environment: FileStore.environment)
        }
        #expect(list.status == 0)
        #expect(list.stdout.split(separator: "\n").count == Self.tokenCount + 100 + 1)
        #expect(listSeconds < Self.limit, "list tokens took \(listSeconds) s")
        let (status, statusSeconds) = try Self.timed {
            try Cachetool.run(["status"] + options, environment: FileStore.environment)
        }
        #expect(status.status == 0)
        #expect(statusSeconds < Self.limit, "status took \(statusSeconds) s")
        print("file group of 10,000 access tokens: list tokens \(listSeconds) s, status \(statusSeconds) s")
    }
}
