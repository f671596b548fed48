import Foundation
import Testing

/// Every command on a file-store group that persists between invocations.
///
/// Runs only when `CacheGroup.open` supports the file store (see ``FileStore/available``).
@Suite(.enabled(if: FileStore.available, "needs the file store in CacheGroup.open (lead: remove this gate after merging it)"))
struct FileStoreTests {
    let folder: URL
    let options: [String]

    init() throws {
        folder = try TestFiles.scratch()
        options = FileStore.options(folder)
    }

    func run(_ arguments: [String], input: Data? = nil) throws -> Cachetool.Run {
        try Cachetool.run(arguments + options, input: input, environment: FileStore.environment)
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

    @Test(arguments: TestFiles.vectorNames)
    func importThenExportWithSecretsGivesBackTheSameBytes(name: String) throws {
        try importVector(name)
        let exported = try run(["export", "-", "--include-secrets"])
        #expect(exported.status == 0)
        #expect(exported.stdoutBytes == (try Data(contentsOf: TestFiles.vector(name))), "export of \(name) differs from msal-python's bytes")
    }

    @Test(arguments: TestFiles.vectorNames)
    func listAndStatusAgreeAcrossInvocations(name: String) throws {
        try importVector(name)
        let human = try run(["list", "tokens"])
        let tokens = try listing("tokens")
        #expect(SingleInvocationTests.rows(human.stdout).map { $0["ID"] ?? "" } == tokens.compactMap { $0["id"] as? String })
        let status = try #require(try run(["status", "--json"]).json() as? [String: Any])
        #expect(status["store"] as? String == "file")
        #expect(status["protection"] as? String == "passphrase")
        #expect(status["entries"] as? Int == (try listing()).count)
        #expect((status["generation"] as? Int ?? 0) >= 1)
        #expect((status["sizeOnDisk"] as? Int ?? 0) > 0)
        let secrets = try TestFiles.secrets(in: TestFiles.vector(name))
        for output in [human.stdout, try run(["status"]).stdout, try run(["export", "-"]).stdout] {
            for secret in secrets { #expect(!output.contains(secret)) }
        }
    }

    @Test func clearWithoutATerminalOrYesRefusesAndChangesNothing() throws {
        try importVector("v2_two_accounts_two_tenants")
        let before = try listing()
        let refused = try run(["clear", "--all"])
        #expect(refused.status == 2, "\(refused)")
        #expect(refused.stderr.hasPrefix("cachetool: error: refusing"))
        #expect(try listing().count == before.count)
        let dryRun = try run(["clear", "--all", "--dry-run"])
        #expect(dryRun.status == 0)
        #expect(dryRun.stdout.contains("Would remove \(before.count) entries"))
        #expect(try listing().count == before.count)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs util-linux script for a terminal"))
    func onATerminalClearAsksAndOnlyYesRemoves() throws {
        try importVector("v1_single_account")
        let before = try listing().count
        let declined = try Cachetool.runOnTerminal(["clear", "--all"] + options, answer: "n\n", environment: FileStore.environment)
        #expect(declined.status == 9, "\(declined)")
        #expect(declined.stdout.contains("About to remove \(before) entries"))
        #expect(declined.stdout.contains("Remove them? [y/N]"))
        #expect(try listing().count == before)
        let accepted = try Cachetool.runOnTerminal(["clear", "--all"] + options, answer: "y\n", environment: FileStore.environment)
        #expect(accepted.status == 0, "\(accepted)")
        #expect(accepted.stdout.contains("Removed \(before) entries"))
        #expect(try listing().isEmpty)
    }

    @Test func clearAnAccountRemovesEverythingOfItInOneTransaction() throws {
        try importVector("v2_two_accounts_two_tenants")
        let generation = try #require(try run(["status", "--json"]).json() as? [String: Any])["generation"] as? Int
        let alice = try listing().filter { ($0["account"] as? String)?.lowercased() == "alice@contoso.com" }
        let result = try run(["clear", "--account", "ALICE@contoso.com", "--yes", "--json"])
        #expect(result.status == 0, "\(result)")
        let report = try #require(try result.json() as? [String: Any])
        #expect(report["removed"] as? Int == alice.count)
        #expect(Set((report["entries"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }) == Set(alice.compactMap { $0["id"] as? String }))
        #expect(try listing().allSatisfy { ($0["account"] as? String)?.lowercased() != "alice@contoso.com" })
        let after = try #require(try run(["status", "--json"]).json() as? [String: Any])["generation"] as? Int
        #expect(after == (generation ?? 0) + 1, "clear must be one transaction")
        let again = try run(["list", "tokens", "--account", "alice@contoso.com"])
        #expect(again.status == 3)
    }

    @Test func clearAClientAndExpiredTokens() throws {
        try importVector("v3_foci_two_clients")
        let client = "22222222-aaaa-4bbb-8ccc-000000000002"
        let result = try run(["clear", "--client", client, "--yes"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("Removed"))
        #expect(try listing().allSatisfy { ($0["clientId"] as? String)?.lowercased() != client })
        // The vectors were written in 2023: every access token has expired.
        let expired = try run(["clear", "--expired", "--yes", "--json"])
        #expect(expired.status == 0)
        #expect(try listing("tokens").allSatisfy { $0["kind"] as? String != "AccessToken" })
    }

    @Test func showAcrossInvocations() throws {
        try importVector("v1_single_account")
        let first = try #require(try listing("tokens").first)
        let id = try #require(first["id"] as? String)
        let shown = try run(["show", id])
        #expect(shown.status == 0)
        #expect(shown.stdout.contains(id))
        #expect(try run(["show", "rt-ffffffffffff"]).status == 3)
    }

    @Test func aWrongPassphraseExitsFiveAndChangesNothing() throws {
        try importVector("v1_single_account")
        let exported = try run(["export", "-", "--include-secrets"]).stdoutBytes
        let wrong = try Cachetool.run(
            ["list", "all"] + options, environment: [FileStore.passphraseVariable: "not the passphrase"])
        #expect(wrong.status == 5, "\(wrong)")
        #expect(wrong.stderrLines.count == 1)
        let wrongImport = try Cachetool.run(
            ["import", TestFiles.vector("v2_two_accounts_two_tenants").path] + options,
            environment: [FileStore.passphraseVariable: "not the passphrase"])
        #expect(wrongImport.status == 5)
        #expect(try run(["export", "-", "--include-secrets"]).stdoutBytes == exported)
    }

    @Test func malformedImportChangesNothing() throws {
        try importVector("v1_single_account")
        let before = try run(["export", "-", "--include-secrets"]).stdoutBytes
        let bad = try TestFiles.write(#"{"AccessToken": {"k": 1}}"#)
        #expect(try run(["import", bad.path]).status == 8)
        #expect(try run(["export", "-", "--include-secrets"]).stdoutBytes == before)
    }

    @Test(arguments: [["status"], ["list", "all"], ["show", "at-000000"], ["clear", "--all", "--yes"], ["export", "-"]])
    func anUnknownGroupExitsThreeAndIsNotCreated(arguments: [String]) throws {
        let result = try Cachetool.run(
            arguments + FileStore.options(folder, group: "com.example.never-written"), environment: FileStore.environment)
        #expect(result.status == 3, "\(result)")
        #expect(result.stderrLines.count == 1)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("com.example.never-written").path))
    }
}
