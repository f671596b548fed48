import Foundation
import SecureTokenCache
import TestSupport
import Testing

/// Everything that works within one invocation: help, argument validation, exit codes,
/// malformed input, `--from FILE` listings, `--json` forms, exports of a memory group.
@Suite(.timeLimit(.minutes(3))) struct SingleInvocationTests {
    static let memory = ["--store", "memory"]

    /// A failure: the documented exit code, one line on stderr in cachetool's form, nothing on stdout.
    func expectFailure(
        _ run: Cachetool.Run, status: Int32, mentioning text: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(run.status == status, "\(run)", sourceLocation: sourceLocation)
        #expect(run.stderrLines.count == 1, "\(run)", sourceLocation: sourceLocation)
        #expect(run.stderr.hasPrefix("cachetool: error: "), "\(run)", sourceLocation: sourceLocation)
        #expect(run.stdout.isEmpty, "\(run)", sourceLocation: sourceLocation)
        if let text { #expect(run.stderr.contains(text), "\(run)", sourceLocation: sourceLocation) }
    }

    // MARK: Help

    @Test func rootHelpDocumentsEveryExitCodeAndCompletion() throws {
        let run = try Cachetool.run(["--help"])
        #expect(run.status == 0)
        for code in 0...10 { #expect(run.stdout.contains("\n  \(code) "), "exit code \(code) is not documented") }
        for command in ["status", "list", "show", "clear", "import", "export", "move", "discover", "doctor"] {
            #expect(run.stdout.contains(command))
        }
        #expect(run.stdout.contains("--generate-completion-script"))
    }

    @Test(arguments: ["status", "list", "show", "clear", "import", "export", "move", "discover", "doctor"])
    func everyCommandHasManPageHelp(command: String) throws {
        let run = try Cachetool.run(["help", command])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("EXAMPLES"))
        #expect(run.stdout.contains("USAGE: cachetool \(command)"))
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func completionScripts(shell: String) throws {
        let run = try Cachetool.run(["--generate-completion-script", shell])
        #expect(run.status == 0)
        #expect(run.stdout.contains("cachetool"))
    }

    // MARK: Usage errors: exit 2

    @Test(arguments: [
        ["list"], ["list", "bogus"], ["bogus-command"], ["status", "--store", "bogus"],
        ["clear", "--store", "memory"], ["clear", "--all", "--expired", "--store", "memory"],
        ["status", "--store", "memory", "--passphrase-env", "CACHETOOL_SURELY_UNSET_VARIABLE"],
        ["status", "--store", "memory", "--passphrase-env", "HOME", "--key-file", "/tmp/k"],
        ["status", "--store", "memory", "--group", "bad name/with slash"],
        ["import", "/dev/null", "--format", "adal", "--store", "memory"],
    ])
    func usageErrorsExitTwoWithOneLine(arguments: [String]) throws {
        expectFailure(try Cachetool.run(arguments), status: 2)
    }

    @Test func globalOptionsMayPrecedeTheCommand() throws {
        let run = try Cachetool.run(["--store", "memory", "--group=com.example.before", "status", "--json"])
        #expect(run.status == 0, "\(run)")
        let status = try #require(try run.json() as? [String: Any])
        #expect(status["group"] as? String == "com.example.before")
        // --url too, which only --store postgres takes: a usage error of its own, not an unknown
        // option.
        let postgres = try Cachetool.run(["--store", "postgres", "--url", "postgres://u@h/d", "status"])
        #expect(postgres.status == 2, "\(postgres)")
        #expect(!postgres.stderr.contains("Unknown option"), "\(postgres)")
    }

    // MARK: Import

    @Test(arguments: [
        "not json at all", "[1, 2, 3]", #"{"AccessToken": 3}"#, #"{"AccessToken": {"k": "v"}}"#, #"{"Account": {"#, "",
    ])
    func malformedImportExitsEight(text: String) throws {
        let file = try TestFiles.write(text)
        expectFailure(try Cachetool.run(["import", file.path] + Self.memory), status: 8, mentioning: "nothing was imported")
    }

    @Test func malformedStandardInputExitsEight() throws {
        expectFailure(try Cachetool.run(["import", "-"] + Self.memory, input: Data("{oops".utf8)), status: 8)
    }

    @Test func importOfAMissingFileExitsThree() throws {
        expectFailure(
            try Cachetool.run(["import", "/nonexistent/cache.json"] + Self.memory), status: 3, mentioning: "No such file")
    }

    @Test(arguments: TestFiles.vectorNames)
    func importReportsTheEntryCount(name: String) throws {
        let file = TestFiles.vector(name)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: [String: Any]])
        let count = document.values.reduce(0) { $0 + $1.count }
        let run = try Cachetool.run(["import", file.path] + Self.memory)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("Imported \(count) entries"))
        #expect(run.stderr.contains("memory store keeps nothing"))
    }

    // MARK: Listings of a file (--from)

    /// Rows of a human table: the header's columns, then one dictionary per row keyed by header.
    static func rows(_ table: String) -> [[String: String]] {
        let lines = table.split(separator: "\n").map(String.init)
        guard let header = lines.first else { return [] }
        // Column starts: where a header word begins after two spaces (headers have single spaces).
        var starts: [String.Index] = [header.startIndex]
        var index = header.startIndex
        while let gap = header.range(of: "  ", range: index..<header.endIndex) {
            var next = gap.upperBound
            while next < header.endIndex, header[next] == " " { next = header.index(after: next) }
            starts.append(next)
            index = next
        }
        let offsets = starts.map { header.distance(from: header.startIndex, to: $0) }
        let names = offsets.enumerated().map { position, offset in
            let end = position + 1 < offsets.count ? offsets[position + 1] : header.count
            return String(Array(header)[offset..<end]).trimmingCharacters(in: .whitespaces)
        }
        return lines.dropFirst().map { line in
            let characters = Array(line)
            var row: [String: String] = [:]
            for (position, offset) in offsets.enumerated() {
                let end = position + 1 < offsets.count ? min(offsets[position + 1], characters.count) : characters.count
                row[names[position]] =
                    offset < characters.count ? String(characters[offset..<end]).trimmingCharacters(in: .whitespaces) : ""
            }
            return row
        }
    }

    @Test(arguments: TestFiles.vectorNames)
    func tokenListingJSONMatchesTheTable(name: String) throws {
        let file = TestFiles.vector(name).path
        let human = try Cachetool.run(["list", "tokens", "--from", file])
        let json = try Cachetool.run(["list", "tokens", "--from", file, "--json"])
        #expect(human.status == 0 && json.status == 0, "\(human)\n\(json)")
        let rows = Self.rows(human.stdout)
        let objects = try #require(try json.json() as? [[String: Any]])
        #expect(rows.count == objects.count)
        #expect(!rows.isEmpty)
        for (row, object) in zip(rows, objects) {
            #expect(row["ID"] == object["id"] as? String)
            #expect(row["KIND"] == object["kind"] as? String)
            #expect(row["ACCOUNT"] == (object["account"] as? String ?? "-"))
            #expect(row["CLIENT"] == (object["clientId"] as? String ?? "-"))
            #expect(row["REALM"] == (object["realm"] as? String ?? "-"))
            #expect(row["ENVIRONMENT"] == object["environment"] as? String)
            #expect(row["SCOPES"] == ((object["scopes"] as? [String])?.joined(separator: " ") ?? "-"))
            #expect(row["FAMILY"] == (object["familyId"] as? String ?? "-"))
            #expect(row["SECRET"] == (object["secretFingerprint"] as? String ?? "-"))
            if let expired = object["expired"] as? Bool {
                #expect(row["EXPIRES IN"]?.hasPrefix("expired") == expired)
            }
            #expect(["AccessToken", "RefreshToken", "IdToken"].contains(object["kind"] as? String ?? ""))
        }
    }

    @Test(arguments: TestFiles.vectorNames)
    func accountListingJSONMatchesTheTable(name: String) throws {
        let file = TestFiles.vector(name).path
        let human = try Cachetool.run(["list", "accounts", "--from", file])
        let json = try Cachetool.run(["list", "accounts", "--from", file, "--json"])
        let rows = Self.rows(human.stdout)
        let objects = try #require(try json.json() as? [[String: Any]])
        #expect(rows.count == objects.count)
        for (row, object) in zip(rows, objects) {
            #expect(row["ID"] == object["id"] as? String)
            #expect(row["USERNAME"] == object["username"] as? String)
            #expect(row["HOME ACCOUNT ID"] == object["homeAccountId"] as? String)
            #expect(row["REALM"] == object["realm"] as? String)
        }
    }

    @Test func listFiltersByAccountAndClient() throws {
        let file = TestFiles.vector("v2_two_accounts_two_tenants").path
        let bob = try #require(
            try Cachetool.run(["list", "tokens", "--from", file, "--account", "BOB@fabrikam.onmicrosoft.com", "--json"]).json()
                as? [[String: Any]])
        #expect(!bob.isEmpty)
        #expect(bob.allSatisfy { ($0["account"] as? String)?.lowercased() == "bob@fabrikam.onmicrosoft.com" })
        let v3 = TestFiles.vector("v3_foci_two_clients").path
        let client = "22222222-aaaa-4bbb-8ccc-000000000002"
        let tokens = try #require(
            try Cachetool.run(["list", "tokens", "--from", v3, "--client", client, "--json"]).json() as? [[String: Any]])
        #expect(!tokens.isEmpty)
        #expect(tokens.allSatisfy { $0["clientId"] as? String == client })
        let family = try #require(try Cachetool.run(["list", "tokens", "--from", v3, "--json"]).json() as? [[String: Any]])
        #expect(family.contains { $0["kind"] as? String == "RefreshToken" && $0["familyId"] as? String == "1" })
    }

    /// An app-only token (client credentials) belongs to no user: `(app)` in the table, `null`
    /// in JSON.
    @Test func anAppOnlyTokenListsAsAppInTheAccountColumn() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("stc-app-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        let key =
            "-login.microsoftonline.com-accesstoken-55555555-aaaa-4bbb-8ccc-000000000005-72f988bf-86f1-41af-91ab-2d7cd011db47-https://graph.microsoft.com/.default"
        let cache = """
            {"AccessToken": {"\(key)": {"credential_type": "AccessToken", "secret": "at-app", "home_account_id": null,
            "environment": "login.microsoftonline.com", "client_id": "55555555-aaaa-4bbb-8ccc-000000000005",
            "target": "https://graph.microsoft.com/.default", "realm": "72f988bf-86f1-41af-91ab-2d7cd011db47",
            "token_type": "Bearer", "cached_at": "1700000000", "expires_on": "1700003599", "extended_expires_on": "1700003599"}}}
            """
        try Data(cache.utf8).write(to: file)
        let human = try Cachetool.run(["list", "tokens", "--from", file.path])
        #expect(human.status == 0, "\(human)")
        let rows = Self.rows(human.stdout)
        #expect(rows.count == 1)
        #expect(rows.first?["ACCOUNT"] == "(app)")
        #expect(rows.first?["SCOPES"] == "https://graph.microsoft.com/.default")
        let json = try #require(try Cachetool.run(["list", "tokens", "--from", file.path, "--json"]).json() as? [[String: Any]])
        #expect(json.count == 1)
        #expect(json.first?["account"] is NSNull)
        #expect(json.first?["homeAccountId"] is NSNull)
    }

    /// An on-behalf-of token is served only to its assertion's holder: `(obo)` before its user's
    /// name, whichever way the SDK stored the hash.
    @Test func anOnBehalfOfTokenListsAsOBOInTheAccountColumn() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("stc-obo-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        let user = "00000000-0000-0000-1111-000000000001.72f988bf-86f1-41af-91ab-2d7cd011db47"
        func token(_ key: String, account: String, hash: String) -> String {
            """
            "\(key)": {"credential_type": "AccessToken", "secret": "at-\(key)", "home_account_id": "\(account)",
            "environment": "login.microsoftonline.com", "client_id": "66666666-aaaa-4bbb-8ccc-000000000006",
            "target": "api://downstream/Data.Read", "realm": "72f988bf-86f1-41af-91ab-2d7cd011db47",
            "cached_at": "1700000000", "expires_on": "1700003599", \(hash)}
            """
        }
        let cache = """
            {"AccessToken": {\(token("dotnet", account: user, hash: #""user_assertion_hash": "mE3PxTLwW99wMuxBMZVXlrUFn-AKt5rPdcX53yPqyrE""#)),
            \(token("node", account: "", hash: #""userAssertionHash": "mE3PxTLwW99wMuxBMZVXlrUFn-AKt5rPdcX53yPqyrE""#))},
            "Account": {"acct": {"home_account_id": "\(user)", "environment": "login.microsoftonline.com",
            "realm": "72f988bf-86f1-41af-91ab-2d7cd011db47", "local_account_id": "00000000-0000-0000-1111-000000000001",
            "username": "alice@contoso.com", "authority_type": "MSSTS"}}}
            """
        try Data(cache.utf8).write(to: file)
        let human = try Cachetool.run(["list", "tokens", "--from", file.path])
        #expect(human.status == 0, "\(human)")
        let accounts = Self.rows(human.stdout).compactMap { $0["ACCOUNT"] }.sorted()
        #expect(accounts == ["(obo)", "(obo) alice@contoso.com"], "\(human.stdout)")
    }

    @Test func listOfAnUnknownAccountExitsThree() throws {
        let file = TestFiles.vector("v1_single_account").path
        expectFailure(try Cachetool.run(["list", "tokens", "--from", file, "--account", "nobody@example.com"]), status: 3)
    }

    @Test func showFindsAnEntryByIdPrefixAndKey() throws {
        let file = TestFiles.vector("v3_foci_two_clients").path
        let list = try #require(try Cachetool.run(["list", "all", "--from", file, "--json"]).json() as? [[String: Any]])
        for object in list {
            let id = try #require(object["id"] as? String)
            let key = try #require(object["key"] as? String)
            for reference in [id, String(id.prefix(id.hasPrefix("acct") ? 8 : 7)), key] {
                let run = try Cachetool.run(["show", reference, "--from", file, "--json"])
                #expect(run.status == 0, "\(run)")
                let shown = try #require(try run.json() as? [String: Any])
                #expect(shown["id"] as? String == id)
                #expect(shown["kind"] as? String == object["kind"] as? String)
            }
        }
        expectFailure(try Cachetool.run(["show", "at-000000000000", "--from", file]), status: 3)
    }

    @Test(.tags(.slow), arguments: TestFiles.vectorNames)
    func showJSONMatchesTheHumanForm(name: String) throws {
        let file = TestFiles.vector(name).path
        let list = try #require(try Cachetool.run(["list", "all", "--from", file, "--json"]).json() as? [[String: Any]])
        for object in list {
            let id = try #require(object["id"] as? String)
            let human = try Cachetool.run(["show", id, "--from", file])
            let json = try #require(try Cachetool.run(["show", id, "--from", file, "--json"]).json() as? [String: Any])
            var values: [String: String] = [:]
            for line in human.stdout.split(separator: "\n") where !line.hasPrefix(" ") {
                guard let colon = line.firstIndex(of: ":") else { continue }
                values[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            #expect(values["ID"] == json["id"] as? String)
            #expect(values["Kind"] == json["kind"] as? String)
            #expect(values["Key"] == json["key"] as? String)
            #expect(values["Client"] == (json["clientId"] as? String ?? "-"))
            #expect(values["Realm"] == (json["realm"] as? String ?? "-"))
            #expect(values["Environment"] == json["environment"] as? String)
            if let scopes = json["scopes"] as? [String] { #expect(values["Scopes"] == scopes.joined(separator: " ")) }
            let fields = try #require(json["fields"] as? [String: Any])
            for (field, value) in fields {
                if let text = value as? String {
                    #expect(human.stdout.contains("  \(field):"), "field \(field)")
                    #expect(human.stdout.contains(text))
                }
            }
        }
    }

    @Test func showRevealsTheSecretOnlyWhenAsked() throws {
        let file = TestFiles.vector("v1_single_account")
        let secrets = try TestFiles.secrets(in: file)
        let list = try #require(try Cachetool.run(["list", "tokens", "--from", file.path, "--json"]).json() as? [[String: Any]])
        for object in list {
            let id = try #require(object["id"] as? String)
            let hidden = try Cachetool.run(["show", id, "--from", file.path])
            #expect(hidden.status == 0)
            #expect(hidden.stdout.contains("fingerprint \(object["secretFingerprint"] as? String ?? "?")"))
            for secret in secrets { #expect(!hidden.stdout.contains(secret) && !hidden.stderr.contains(secret)) }
            let hiddenJSON = try #require(
                try Cachetool.run(["show", id, "--from", file.path, "--json"]).json() as? [String: Any])
            #expect((hiddenJSON["fields"] as? [String: Any])?["secret"] == nil)
            let shown = try Cachetool.run(["show", id, "--from", file.path, "--reveal", "--json"])
            let fields = try #require((try shown.json() as? [String: Any])?["fields"] as? [String: Any])
            let secret = try #require(fields["secret"] as? String)
            #expect(secrets.contains(secret))
            #expect(shown.stderr.contains("contains a secret"))
        }
    }

    @Test(.tags(.slow), arguments: TestFiles.vectorNames)
    func noSecretInAnyOutputWithoutReveal(name: String) throws {
        let file = TestFiles.vector(name)
        let secrets = try TestFiles.secrets(in: file)
        #expect(!secrets.isEmpty)
        var runs = [
            try Cachetool.run(["list", "all", "--from", file.path]),
            try Cachetool.run(["list", "all", "--from", file.path, "--json"]),
            try Cachetool.run(["list", "accounts", "--from", file.path]),
            try Cachetool.run(["import", file.path] + Self.memory),
        ]
        let ids = try #require(try runs[1].json() as? [[String: Any]]).compactMap { $0["id"] as? String }
        for id in ids {
            runs.append(try Cachetool.run(["show", id, "--from", file.path]))
            runs.append(try Cachetool.run(["show", id, "--from", file.path, "--json"]))
        }
        for run in runs {
            for secret in secrets {
                #expect(!run.stdout.contains(secret) && !run.stderr.contains(secret), "a secret leaked: \(run)")
            }
        }
    }

    // MARK: Status, export, clear on a memory group

    @Test func statusJSONMatchesTheHumanForm() throws {
        let human = try Cachetool.run(["status", "--group", "com.example.status"] + Self.memory)
        let json = try Cachetool.run(["status", "--group", "com.example.status", "--json"] + Self.memory)
        #expect(human.status == 0 && json.status == 0)
        let status = try #require(try json.json() as? [String: Any])
        #expect(status["group"] as? String == "com.example.status")
        #expect(status["store"] as? String == "memory")
        #expect(status["protection"] as? String == "memoryOnly")
        #expect(status["generation"] as? Int == 0)
        #expect(status["entries"] as? Int == 0)
        #expect(human.stdout.contains("Group:         com.example.status"))
        #expect(human.stdout.contains("Store:         memory (\(status["reason"] as? String ?? "?"))"))
        #expect(human.stdout.contains("Location:      \(status["location"] as? String ?? "?")"))
        #expect(human.stdout.contains("Entries:       0 "))
    }

    @Test func exportCreatesAPrivateFileAndNeverClobbers() throws {
        let folder = try TestFiles.scratch()
        let target = folder.appendingPathComponent("export.json")
        let first = try Cachetool.run(["export", target.path] + Self.memory)
        #expect(first.status == 0, "\(first)")
        #expect(first.stderr.contains("secrets were left out"))
        let attributes = try FileManager.default.attributesOfItem(atPath: target.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(try Data(contentsOf: target) == Data("{}".utf8))

        try Data("precious".utf8).write(to: target)
        expectFailure(try Cachetool.run(["export", target.path] + Self.memory), status: 2, mentioning: "--force")
        #expect(try Data(contentsOf: target) == Data("precious".utf8))

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target.path)
        let forced = try Cachetool.run(["export", target.path, "--force", "--include-secrets"] + Self.memory)
        #expect(forced.status == 0, "\(forced)")
        #expect(!forced.stderr.contains("secrets were left out"))
        #expect((try FileManager.default.attributesOfItem(atPath: target.path)[.posixPermissions] as? Int) == 0o600)
        #expect(try Data(contentsOf: target) == Data("{}".utf8))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(leftovers == ["export.json"], "a temporary file was left behind")
    }

    @Test func exportToStandardOutput() throws {
        let run = try Cachetool.run(["export", "-"] + Self.memory)
        #expect(run.status == 0)
        #expect(run.stdout == "{}")
        #expect(run.stderr.contains("secrets were left out"))
    }

    @Test func exportIntoAMissingFolderExitsThree() throws {
        expectFailure(try Cachetool.run(["export", "/nonexistent/folder/x.json"] + Self.memory), status: 3)
    }

    @Test func clearOfAnEmptyGroupRemovesNothing() throws {
        let run = try Cachetool.run(["clear", "--all"] + Self.memory)
        #expect(run.status == 0)
        #expect(run.stdout.contains("Nothing to remove"))
        let json = try Cachetool.run(["clear", "--expired", "--dry-run", "--json"] + Self.memory)
        let report = try #require(try json.json() as? [String: Any])
        #expect(report["removed"] as? Int == 0)
        #expect(report["dryRun"] as? Bool == true)
        expectFailure(try Cachetool.run(["clear", "--client", "nobody"] + Self.memory), status: 3)
    }

    @Test(
        .tags(.slow),
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs util-linux script for a terminal"))
    func onATerminalAnEmptyGroupIsClearedWithoutAQuestion() throws {
        let run = try Cachetool.runOnTerminal(["clear", "--all"] + Self.memory, answer: "n\n")
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("Nothing to remove"))
        #expect(!run.stdout.contains("[y/N]"), "nothing to remove, so nothing to confirm")
    }

    // MARK: Doctor

    @Test func doctorReportsEveryCheckAndItsJSONMatches() throws {
        let data = try TestFiles.scratch()
        let environment = ["XDG_DATA_HOME": data.path]
        let bus = ["DBUS_SESSION_BUS_ADDRESS"]
        let human = try Cachetool.run(["doctor"] + Self.memory, environment: environment, removing: bus)
        let json = try Cachetool.run(["doctor", "--json"] + Self.memory, environment: environment, removing: bus)
        #expect(human.status == 0, "\(human)")
        #expect(json.status == 0)
        let checks = try #require(try json.json() as? [[String: Any]])
        let names = checks.compactMap { $0["check"] as? String }
        for name in [
            "session bus", "Secret Service", "keyring unlocked", "directory", "coordination (file)", "coordination (keyring)",
            "file integrity",
        ] {
            #expect(names.contains(name))
        }
        let rows = Self.rows(human.stdout.components(separatedBy: "\n\n")[0])
        #expect(rows.map { $0["CHECK"] ?? "" } == names)
        #expect(rows.map { $0["RESULT"] ?? "" } == checks.map { $0["outcome"] as? String ?? "" })
    }

    /// doctor asks the Secret Service for real, read only: without a bus it warns; with the test
    /// session's keyring it finds it unlocked.
    @Test func doctorProbesTheSecretService() throws {
        let root = try TestFiles.scratch()
        let noBus = try Cachetool.run(["doctor", "--json", "--dir", root.path], removing: ["DBUS_SESSION_BUS_ADDRESS"])
        var outcomes = Dictionary(
            uniqueKeysWithValues: try #require(try noBus.json() as? [[String: Any]]).map {
                ($0["check"] as? String ?? "", $0["outcome"] as? String ?? "")
            })
        #expect(noBus.status == 0, "\(noBus)")
        #expect(outcomes["Secret Service"] == "warning" && outcomes["keyring unlocked"] == "skipped")
        guard ProcessInfo.processInfo.environment["STC_KEYRING_REQUIRED"] == "1" else { return }
        let healthy = try Cachetool.run(["doctor", "--json", "--dir", root.path])
        outcomes = Dictionary(
            uniqueKeysWithValues: try #require(try healthy.json() as? [[String: Any]]).map {
                ($0["check"] as? String ?? "", $0["outcome"] as? String ?? "")
            })
        #expect(healthy.status == 0, "\(healthy)")
        #expect(outcomes["Secret Service"] == "ok" && outcomes["keyring unlocked"] == "ok", "\(healthy.stdout)")
        let created = FileManager.default.enumerator(atPath: root.path)?.allObjects as? [String] ?? []
        #expect(created.isEmpty, "doctor created \(created)")
    }

    /// Every process finds a group's coordination folder from its name and data folder; doctor
    /// shows it for both stores, and who holds the lock, without creating anything.
    @Test func doctorSaysWhereTheGroupCoordinates() throws {
        let root = try TestFiles.scratch()
        let group = "com.example.doctor-coordination"
        let arguments = ["doctor", "--json", "--dir", root.path, "--group", group]
        let before = try Cachetool.run(arguments, removing: ["DBUS_SESSION_BUS_ADDRESS"])
        var details = Dictionary(
            uniqueKeysWithValues: try #require(try before.json() as? [[String: Any]]).map {
                ($0["check"] as? String ?? "", $0["detail"] as? String ?? "")
            })
        #expect(details["coordination (file)"] == root.path + "/\(group) (not created: no file group yet)")
        #expect(details["coordination (keyring)"] == root.path + "/.\(group).keyring (not created: no keyring group yet)")
        #expect(!FileManager.default.fileExists(atPath: root.path + "/" + group))

        let configuration = CacheConfiguration(store: .file, directory: root.path, keySource: .keyFile(path: root.path + "/key"))
        // A write takes the group lock, and the lock file keeps the pid of its last holder.
        try CacheGroup.open(group, configuration: configuration).purgeExpiredAccessTokens()
        let after = try Cachetool.run(arguments, removing: ["DBUS_SESSION_BUS_ADDRESS"])
        details = Dictionary(
            uniqueKeysWithValues: try #require(try after.json() as? [[String: Any]]).map {
                ($0["check"] as? String ?? "", $0["detail"] as? String ?? "")
            })
        #expect(details["coordination (file)"] == root.path + "/\(group): lock free (last taken by pid \(getpid()))")

        // A holder records its pid when it takes the lock: doctor says since when it holds it.
        let lock = open(root.path + "/\(group)/lock", O_RDWR | O_CLOEXEC)
        try #require(lock >= 0)
        defer { close(lock) }
        try #require(flock(lock, LOCK_EX) == 0)
        let pid = Array("\(getpid())\n".utf8)
        try #require(pwrite(lock, pid, pid.count, 0) == pid.count)
        usleep(300_000)
        let held = try Cachetool.run(arguments, removing: ["DBUS_SESSION_BUS_ADDRESS"])
        details = Dictionary(
            uniqueKeysWithValues: try #require(try held.json() as? [[String: Any]]).map {
                ($0["check"] as? String ?? "", $0["detail"] as? String ?? "")
            })
        let detail = try #require(details["coordination (file)"])
        let prefix = root.path + "/\(group): locked by pid \(getpid()) for "
        #expect(detail.hasPrefix(prefix), "\(detail)")
        let seconds = Double(detail.dropFirst(prefix.count).dropLast(2)) ?? -1
        #expect(seconds >= 0.3 && seconds < 60, "\(detail)")
    }

    @Test func doctorFailsOnAnOpenDirectory() throws {
        let root = try TestFiles.scratch()
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root.path)
        let run = try Cachetool.run(["doctor", "--dir", root.path] + Self.memory, removing: ["DBUS_SESSION_BUS_ADDRESS"])
        #expect(run.status == 10, "\(run)")
        #expect(run.stdout.contains("chmod 700 \(root.path)"))
    }
}
