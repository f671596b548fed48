import Foundation
import TestSupport
import Testing

/// Every command on a group that persists between invocations: in the file store always, in the
/// keyring store inside `scripts/with-keyring`, and in PostgreSQL inside `scripts/postgres run`
/// (``StoreUnderTest/available``).
@Suite(.tags(.slow), .timeLimit(.minutes(5))) struct PersistentGroupTests {
    /// One fresh group in one store.
    struct Group {
        let store: StoreUnderTest
        let options: [String]
        let environment: [String: String]

        init(_ store: StoreUnderTest) throws {
            self.store = store
            (options, environment) = try store.newGroup()
        }

        func run(_ arguments: [String], input: Data? = nil) throws -> Cachetool.Run {
            try Cachetool.run(arguments + options, input: input, environment: environment)
        }

        func onTerminal(_ arguments: [String], answer: String) throws -> Cachetool.Run {
            try Cachetool.runOnTerminal(arguments + options, answer: answer, environment: environment)
        }

        func importVector(_ name: String) throws {
            let result = try run(["import", TestFiles.vector(name).path])
            try #require(result.status == 0, "\(result)")
        }

        func listing(_ what: String = "all") throws -> [[String: Any]] {
            let result = try run(["list", what, "--json"])
            try #require(result.status == 0, "\(result)")
            return try #require(try result.json() as? [[String: Any]])
        }

        func status() throws -> [String: Any] {
            let result = try run(["status", "--json"])
            try #require(result.status == 0, "\(result)")
            return try #require(try result.json() as? [String: Any])
        }

        func export() throws -> Data { try run(["export", "-", "--include-secrets"]).stdoutBytes }
    }

    static let stores = StoreUnderTest.available
    /// The web API of the server tests, and its tenant.
    static let api = "66666666-aaaa-4bbb-8ccc-000000000006"
    static let tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"

    @Test(arguments: stores, TestFiles.vectorNames)
    func importThenExportWithSecretsGivesBackTheSameBytes(store: StoreUnderTest, name: String) throws {
        let group = try Group(store)
        try group.importVector(name)
        #expect(
            try group.export() == (try Data(contentsOf: TestFiles.vector(name))),
            "export of \(name) differs from msal-python's bytes")
    }

    @Test(arguments: stores, TestFiles.vectorNames)
    func listStatusAndShowAgreeAcrossInvocations(store: StoreUnderTest, name: String) throws {
        let group = try Group(store)
        try group.importVector(name)
        let human = try group.run(["list", "tokens"])
        let tokens = try group.listing("tokens")
        #expect(SingleInvocationTests.rows(human.stdout).map { $0["ID"] ?? "" } == tokens.compactMap { $0["id"] as? String })
        let status = try group.status()
        #expect(status["store"] as? String == store.rawValue)
        #expect(status["protection"] as? String == store.protection)
        #expect(status["entries"] as? Int == (try group.listing()).count)
        #expect((status["generation"] as? Int ?? 0) >= 1)
        let humanStatus = try group.run(["status"])
        #expect(humanStatus.stdout.contains("Generation:    \(status["generation"] as? Int ?? -1)\n"))
        #expect(humanStatus.stdout.contains("Entries:       \(status["entries"] as? Int ?? -1) "))
        let id = try #require(tokens.first?["id"] as? String)
        let shown = try group.run(["show", id, "--json"])
        #expect((try shown.json() as? [String: Any])?["id"] as? String == id)
        let secrets = try TestFiles.secrets(in: TestFiles.vector(name))
        for run in [human, humanStatus, shown, try group.run(["list", "all", "--json"]), try group.run(["export", "-"])] {
            for secret in secrets { #expect(!run.stdout.contains(secret) && !run.stderr.contains(secret)) }
        }
    }

    /// A server's group: a user's sign-in, an app-only token and an on-behalf-of token of one
    /// web API. `--kind` lists and clears each kind apart.
    @Test(arguments: stores)
    func listAndClearByKindTouchOnlyThatKindsTokens(store: StoreUnderTest) throws {
        let group = try Group(store)
        try group.importVector("v1_single_account")
        let (api, tenant) = (Self.api, Self.tenant)
        func token(_ secret: String, target: String, account: String, extra: String = "") -> String {
            """
            {"credential_type": "AccessToken", "secret": "\(secret)", "home_account_id": \(account),
             "environment": "login.microsoftonline.com", "client_id": "\(api)", "target": "\(target)", "realm": "\(tenant)",
             "token_type": "Bearer", "cached_at": "1700000000", "expires_on": "4000000000",
             "extended_expires_on": "4000000000"\(extra)}
            """
        }
        let server = """
            {"AccessToken": {
            "app-key": \(token("at-app-secret", target: "https://graph.microsoft.com/.default", account: "null")),
            "obo-key": \(token("at-obo-secret", target: "api://downstream/Data.Read", account: "\"\"",
                extra: #", "userAssertionHash": "mE3PxTLwW99wMuxBMZVXlrUFn-AKt5rPdcX53yPqyrE""#))}}
            """
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("stc-kind-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(server.utf8).write(to: file)
        #expect(try group.run(["import", file.path]).status == 0)

        let users = try #require(try group.run(["list", "tokens", "--kind", "user", "--json"]).json() as? [[String: Any]])
        let apps = try #require(try group.run(["list", "tokens", "--kind", "app", "--json"]).json() as? [[String: Any]])
        let obos = try #require(try group.run(["list", "tokens", "--kind", "obo", "--json"]).json() as? [[String: Any]])
        #expect(apps.count == 1 && obos.count == 1)
        #expect(users.count == (try group.listing("tokens")).count - 2)
        #expect(users.allSatisfy { $0["clientId"] as? String != api })

        let cleared = try group.run(["clear", "--kind", "obo", "--client", api, "--yes", "--json"])
        #expect(cleared.status == 0, "\(cleared)")
        #expect(!cleared.stdout.contains("at-obo-secret"))
        #expect((try group.run(["list", "tokens", "--kind", "obo", "--json"]).json() as? [[String: Any]])?.isEmpty == true)
        #expect((try group.run(["list", "tokens", "--kind", "app", "--json"]).json() as? [[String: Any]])?.count == 1)
        #expect((try group.run(["list", "tokens", "--kind", "user", "--json"]).json() as? [[String: Any]])?.count == users.count)
        // A user's tokens are cleared by account or client, not by kind.
        let refused = try group.run(["clear", "--kind", "user", "--yes"])
        #expect(refused.status == 2 && refused.stderr.contains("--kind takes app or obo"), "\(refused)")
        #expect((try group.run(["list", "tokens", "--kind", "user", "--json"]).json() as? [[String: Any]])?.count == users.count)
    }

    /// The same server's group by partition: one row per partition, keyed as MSAL.NET keys its
    /// cache; `--partition` lists and clears one partition's entries and nothing else.
    @Test(arguments: stores)
    func listAndClearByPartitionTouchOnlyThatPartition(store: StoreUnderTest) throws {
        let group = try Group(store)
        try group.importVector("v1_single_account")
        let (api, tenant) = (Self.api, Self.tenant)
        let hash = "mE3PxTLwW99wMuxBMZVXlrUFn-AKt5rPdcX53yPqyrE"
        let server = """
            {"AccessToken": {
            "app-key": {"credential_type": "AccessToken", "secret": "at-app-secret", "home_account_id": null,
             "environment": "login.microsoftonline.com", "client_id": "\(api)", "target": "https://graph.microsoft.com/.default",
             "realm": "\(tenant)", "cached_at": "1700000000", "expires_on": "4000000000"},
            "obo-key": {"credential_type": "AccessToken", "secret": "at-obo-secret", "home_account_id": "",
             "environment": "login.microsoftonline.com", "client_id": "\(api)", "target": "api://downstream/Data.Read",
             "realm": "\(tenant)", "cached_at": "1700000000", "expires_on": "4000000000", "user_assertion_hash": "\(hash)="}}}
            """
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("stc-partition-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(server.utf8).write(to: file)
        #expect(try group.run(["import", file.path]).status == 0)

        let listed = try #require(try group.run(["list", "partitions", "--json"]).json() as? [[String: Any]])
        let appKey = "\(api)_\(tenant)_AppTokenCache"
        let byKey = Dictionary(uniqueKeysWithValues: listed.compactMap { row in (row["key"] as? String).map { ($0, row) } })
        #expect(byKey[appKey]?["kind"] as? String == "app")
        #expect(byKey[hash]?["kind"] as? String == "obo")
        #expect(byKey[hash]?["accessTokens"] as? Int == 1)
        let users = listed.filter { $0["kind"] as? String == "user" }
        #expect(users.count == 1)
        let userKey = try #require(users.first?["key"] as? String)
        let userEntries = try #require(users.first?["entries"] as? Int)
        let table = try group.run(["list", "partitions", "--kind", "app"])
        #expect(table.status == 0 && table.stdout.contains(appKey) && !table.stdout.contains(hash), "\(table)")
        #expect(!table.stdout.contains("at-app-secret"))

        let user = try #require(try group.run(["list", "all", "--partition", userKey, "--json"]).json() as? [[String: Any]])
        #expect(user.count == userEntries)
        let cleared = try group.run(["clear", "--partition", hash + "=", "--yes", "--json"])
        #expect(cleared.status == 0 && !cleared.stdout.contains("at-obo-secret"), "\(cleared)")
        let after = try #require(try group.run(["list", "partitions", "--json"]).json() as? [[String: Any]])
        #expect(after.compactMap { $0["key"] as? String } == listed.compactMap { $0["key"] as? String }.filter { $0 != hash })
        let unknown = try group.run(["clear", "--partition", "no-such-partition", "--yes"])
        #expect(unknown.status == 3, "\(unknown)")
    }

    @Test(arguments: stores)
    func clearWithoutATerminalOrYesRefusesAndChangesNothing(store: StoreUnderTest) throws {
        let group = try Group(store)
        try group.importVector("v2_two_accounts_two_tenants")
        let before = try group.export()
        let count = try group.listing().count
        let refused = try group.run(["clear", "--all"])
        #expect(refused.status == 2, "\(refused)")
        #expect(refused.stderr.hasPrefix("cachetool: error: refusing"))
        let dryRun = try group.run(["clear", "--all", "--dry-run"])
        #expect(dryRun.status == 0)
        #expect(dryRun.stdout.contains("Would remove \(count) entries"))
        #expect(try group.export() == before)
    }

    @Test(
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs util-linux script for a terminal"),
        arguments: stores)
    func onATerminalClearAsksAndOnlyYesRemoves(store: StoreUnderTest) throws {
        let group = try Group(store)
        try group.importVector("v1_single_account")
        let count = try group.listing().count
        let declined = try group.onTerminal(["clear", "--all"], answer: "n\n")
        #expect(declined.status == 9, "\(declined)")
        #expect(declined.stdout.contains("About to remove \(count) entries"))
        #expect(declined.stdout.contains("Remove them? [y/N]"))
        #expect(try group.listing().count == count)
        let accepted = try group.onTerminal(["clear", "--all"], answer: "y\n")
        #expect(accepted.status == 0, "\(accepted)")
        #expect(accepted.stdout.contains("Removed \(count) entries"))
        #expect(try group.listing().isEmpty)
    }

    @Test(arguments: stores)
    func clearAnAccountRemovesEverythingOfItInOneTransaction(store: StoreUnderTest) throws {
        let group = try Group(store)
        try group.importVector("v2_two_accounts_two_tenants")
        let generation = try group.status()["generation"] as? Int
        let alice = try group.listing().filter { ($0["account"] as? String)?.lowercased() == "alice@contoso.com" }
        let result = try group.run(["clear", "--account", "ALICE@contoso.com", "--yes", "--json"])
        #expect(result.status == 0, "\(result)")
        let report = try #require(try result.json() as? [String: Any])
        #expect(report["removed"] as? Int == alice.count)
        #expect(
            Set((report["entries"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String })
                == Set(alice.compactMap { $0["id"] as? String }))
        #expect(try group.listing().allSatisfy { ($0["account"] as? String)?.lowercased() != "alice@contoso.com" })
        #expect(try group.status()["generation"] as? Int == (generation ?? 0) + 1, "clear must be one transaction")
        #expect(try group.run(["list", "tokens", "--account", "alice@contoso.com"]).status == 3)
    }

    @Test(arguments: stores)
    func clearAClientAndExpiredTokens(store: StoreUnderTest) throws {
        let group = try Group(store)
        try group.importVector("v3_foci_two_clients")
        let client = "22222222-aaaa-4bbb-8ccc-000000000002"
        let result = try group.run(["clear", "--client", client, "--yes"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("Removed"))
        #expect(try group.listing().allSatisfy { ($0["clientId"] as? String)?.lowercased() != client })
        #expect(try group.run(["clear", "--client", client, "--yes"]).status == 3)
        // The vectors were written in 2023: every access token has expired.
        #expect(try group.run(["clear", "--expired", "--yes"]).status == 0)
        #expect(try group.listing("tokens").allSatisfy { $0["kind"] as? String != "AccessToken" })
    }

    @Test(arguments: stores)
    func badInputChangesNothing(store: StoreUnderTest) throws {
        let group = try Group(store)
        try group.importVector("v1_single_account")
        let before = try group.export()
        let bad = try TestFiles.write(#"{"AccessToken": {"k": 1}}"#)
        let malformed = try group.run(["import", bad.path])
        #expect(malformed.status == 8)
        #expect(malformed.stderrLines.count == 1)
        #expect(try group.run(["show", "rt-ffffffffffff"]).status == 3)
        #expect(try group.run(["clear", "--account", "nobody@example.com", "--yes"]).status == 3)
        #expect(try group.export() == before)
    }
}
