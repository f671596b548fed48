import Foundation
import TestSupport
import Testing

/// Every command on a group that persists between invocations: in the file store always, and in
/// the keyring store inside `scripts/with-keyring` (``StoreUnderTest/available``).
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
        #expect(status["protection"] as? String == (store == .file ? "passphrase" : "keyring"))
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
