import Foundation
import TestSupport
import Testing

/// `list tokens` and `status` on a 10,000-token cache, whole process: every row listed, every
/// entry counted. How fast is `scripts/bench-cachetool`'s question, on a release build, never a
/// test's.
@Suite(.tags(.slow), .timeLimit(.minutes(5))) struct ScaleTests {
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

    /// Fewer than the group test's: a listing from a file parses the whole file, slowly in a
    /// debug build, and the group test covers the large count.
    static let fromFileTokens = 2_000

    @Test func listingALargeFile() throws {
        let file = try Self.largeCache(count: Self.fromFileTokens)
        let run = try Cachetool.run(["list", "tokens", "--from", file.path])
        #expect(run.status == 0)
        #expect(run.stdout.split(separator: "\n").count == Self.fromFileTokens + 100 + 1)
    }

    @Test func listAndStatusOfATenThousandTokenGroup() throws {
        let folder = try TestFiles.scratch()
        let options = FileStore.options(folder)
        let imported = try Cachetool.run(["import", try Self.largeCache().path] + options, environment: FileStore.environment)
        try #require(imported.status == 0, "\(imported)")
        let list = try Cachetool.run(["list", "tokens"] + options, environment: FileStore.environment)
        #expect(list.status == 0)
        #expect(list.stdout.split(separator: "\n").count == Self.tokenCount + 100 + 1)
        // Every access token plus each user's account and refresh token.
        let status = try Cachetool.run(["status", "--json"] + options, environment: FileStore.environment)
        try #require(status.status == 0, "\(status)")
        let fields = try #require(try status.json() as? [String: Any])
        #expect(fields["entries"] as? Int == Self.tokenCount + 2 * 100)
    }
}
