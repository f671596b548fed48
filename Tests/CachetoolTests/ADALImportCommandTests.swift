import Foundation
import Testing

/// `cachetool import --format adal-json`: ADAL for Python caches migrate; export stays msal-json.
@Suite(.timeLimit(.minutes(1))) struct ADALImportCommandTests {
    static let memory = ["--store", "memory"]

    /// One ADAL for Python entry, as adal 1.2.7 writes it (an access token valid for a day).
    static let entry = """
        [{"tokenType": "Bearer", "expiresIn": 3599, "expiresOn": "2999-01-01 10:00:00.123456", \
        "resource": "https://management.core.windows.net/", "accessToken": "at-secret", "refreshToken": "rt-secret", \
        "oid": "00000000-0000-0000-0000-00000000a11c", "tenantId": "72f988bf-86f1-41af-91ab-2d7cd011db47", \
        "userId": "alice@contoso.com", "isUserIdDisplayable": true, "isMRRT": true, \
        "_clientId": "04b07795-8ddb-461a-bbee-02f9e1bf7b46", "_authority": "https://login.microsoftonline.com/common"}]
        """

    @Test func anADALCacheImportsItsTokensAndAccount() throws {
        let file = try TestFiles.write(Self.entry, name: "accessTokens.json")
        let run = try Cachetool.run(["import", "--format", "adal-json", file.path] + Self.memory)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("Imported 3 entries"), "\(run)")
        #expect(!run.stdout.contains("secret") && !run.stderr.contains("secret"))
    }

    @Test func msalJSONStaysTheDefault() throws {
        let file = try TestFiles.write(Self.entry, name: "accessTokens.json")
        let run = try Cachetool.run(["import", file.path] + Self.memory)
        #expect(run.status == 8, "\(run)")
        #expect(run.stderr.contains("nothing was imported"), "\(run)")
    }

    @Test func aMalformedADALCacheExitsEightNamingTheEntry() throws {
        let file = try TestFiles.write(
            #"[{"_clientId": "c", "_authority": "https://login.microsoftonline.com/common"}, {"userId": "x"}]"#)
        let run = try Cachetool.run(["import", "--format", "adal-json", file.path] + Self.memory)
        #expect(run.status == 8, "\(run)")
        #expect(run.stderr.contains("entry 1 has no _clientId"), "\(run)")
        #expect(run.stderr.contains("nothing was imported"), "\(run)")
    }

    @Test func exportRefusesADALJSON() throws {
        let run = try Cachetool.run(["export", "-", "--format", "adal-json"] + Self.memory)
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.contains("adal-json is an import format"), "\(run)")
    }
}
