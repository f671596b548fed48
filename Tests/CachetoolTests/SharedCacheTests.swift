import Foundation
import Testing

/// The other tools' shared caches as `--store`: the presets' paths, every command on an
/// msal-file document, `discover`, `move`, and damaged documents. Each test has its own home
/// folder. The keyring kinds, which need the private keyring, are ``Keyring``'s.
@Suite(.timeLimit(.minutes(3))) struct SharedCacheTests {
    let folder: URL
    var home: URL { folder.appendingPathComponent("home") }
    var azureCLIFile: URL { home.appendingPathComponent(".azure/msal_token_cache.json") }
    var environment: [String: String] {
        [
            "HOME": home.path, "XDG_DATA_HOME": folder.appendingPathComponent("data").path,
            "XDG_CONFIG_HOME": folder.appendingPathComponent("config").path, FileStore.passphraseVariable: "correct horse",
        ]
    }

    init() throws {
        folder = try TestFiles.scratch()
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    }

    func run(_ arguments: [String], input: Data? = nil, environment extra: [String: String] = [:]) throws -> Cachetool.Run {
        try Cachetool.run(
            arguments, input: input, environment: environment.merging(extra) { $1 }, removing: ["AZURE_CONFIG_DIR"])
    }

    /// Puts msal-python's vector `name` where Azure CLI keeps its cache (or at `file`), 0600.
    @discardableResult
    func plant(_ name: String, at file: URL? = nil) throws -> Data {
        let target = file ?? azureCLIFile
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        let bytes = try Data(contentsOf: TestFiles.vector(name))
        try bytes.write(to: target)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: target.path)
        return bytes
    }

    /// Every path under the test's folder with its type, size and modification time: what a
    /// command that creates nothing must leave as it found it.
    func snapshot() throws -> [String: String] {
        var all: [String: String] = [:]
        let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey, .isDirectoryKey]
        let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: keys)
        while let url = walker?.nextObject() as? URL {
            let values = try url.resourceValues(forKeys: Set(keys))
            all[url.path] =
                "\(values.isDirectory == true ? "dir" : "file") \(values.fileSize ?? 0) \(values.contentModificationDate?.timeIntervalSince1970 ?? 0)"
        }
        return all
    }

    func json(_ run: Cachetool.Run) throws -> [String: Any] {
        try #require(run.status == 0, "\(run)")
        return try #require(try run.json() as? [String: Any])
    }

    // MARK: Presets

    @Test func presetsResolveToEachToolsPathUnderHomeAndTheirVariables() throws {
        try plant("v1_single_account")
        let status = try json(try run(["status", "--store", "azure-cli", "--json"]))
        #expect(status["location"] as? String == azureCLIFile.path)
        #expect(status["group"] as? String == "azure-cli")

        let configDir = folder.appendingPathComponent("az-config")
        try plant("v2_two_accounts_two_tenants", at: configDir.appendingPathComponent("msal_token_cache.json"))
        let moved = try json(
            try run(["status", "--store", "azure-cli", "--json"], environment: ["AZURE_CONFIG_DIR": configDir.path]))
        #expect(moved["location"] as? String == configDir.appendingPathComponent("msal_token_cache.json").path)

        // The keyring presets say where their signal file is when there is no cache to open.
        let python = try run(["status", "--store", "azure-identity"])
        #expect(python.status == 3, "\(python)")
        #expect(python.stderr.contains(home.appendingPathComponent(".IdentityService/msal.cache.nocae").path), "\(python)")
        let dotnet = try run(["status", "--store", "azure-identity-dotnet"])
        #expect(dotnet.status == 3, "\(dotnet)")
        #expect(dotnet.stderr.contains(folder.appendingPathComponent("data/.IdentityService/msal.cache.nocae").path), "\(dotnet)")

        let identityFile = home.appendingPathComponent(".IdentityService/msal.cache.nocae")
        try plant("v3_foci_two_clients", at: identityFile)
        let identity = try json(try run(["status", "--store", "azure-identity-file", "--json"]))
        #expect(identity["location"] as? String == identityFile.path)
        #expect(identity["store"] as? String == "msal-file")
    }

    // MARK: Commands on an msal-file document

    @Test func statusListShowAndExportReadTheDocumentAndSayItIsNotSealed() throws {
        let vector = try plant("v2_two_accounts_two_tenants")
        let before = try snapshot()
        let status = try json(try run(["status", "--store", "azure-cli", "--json"]))
        #expect(status["store"] as? String == "msal-file")
        #expect(status["protection"] as? String == "plaintextFile")
        #expect((status["protectionDescription"] as? String)?.contains("not sealed") == true)
        #expect((status["warnings"] as? [String])?.contains { $0.contains("cannot be sealed") } == true, "\(status)")
        let shared = try #require(status["sharedCache"] as? [String: Any])
        #expect(shared["sealed"] as? Bool == false)
        #expect((shared["advice"] as? [String])?.contains { $0.contains("cachetool move --from-store azure-cli") } == true)

        let listed = try run(["list", "all", "--json", "--store", "azure-cli"])
        let entries = try #require(try listed.json() as? [[String: Any]])
        #expect(entries.count == status["entries"] as? Int)
        let id = try #require(entries.first?["id"] as? String)
        #expect(try run(["show", id, "--store", "azure-cli"]).status == 0)
        let exported = try run(["export", "-", "--include-secrets", "--store", "azure-cli"])
        #expect(exported.stdoutBytes == vector, "the export differs from msal-python's bytes")

        let human = try run(["status", "--store", "azure-cli"])
        #expect(human.stdout.contains("Protection:    plaintextFile: not sealed"), "\(human)")
        #expect(human.stdout.contains("Advice:"))
        let doctor = try run(["doctor", "--store", "azure-cli", "--json"])
        #expect(doctor.status == 0, "\(doctor)")
        let checks = try #require(try doctor.json() as? [[String: Any]])
        let protection = try #require(checks.first { $0["check"] as? String == "protection" })
        #expect(protection["outcome"] as? String == "warning")
        #expect((protection["advice"] as? String)?.contains("az logout") == true)
        #expect(checks.first { $0["check"] as? String == "document" }?["outcome"] as? String == "ok")

        let secrets = try TestFiles.secrets(in: TestFiles.vector("v2_two_accounts_two_tenants"))
        for output in [listed, human, doctor] {
            for secret in secrets { #expect(!output.stdout.contains(secret)) }
        }
        #expect(try snapshot() == before, "a read-only command created or changed something")
        #expect(try Data(contentsOf: azureCLIFile) == vector)

        // A tool holding the lock file: doctor names it and says for how long, and takes nothing.
        let lockFile = azureCLIFile.path + ".lockfile"
        try Data("\(getpid()) swiftpm-testing-helper".utf8).write(to: URL(fileURLWithPath: lockFile))
        let held = try #require(try run(["doctor", "--store", "azure-cli", "--json"]).json() as? [[String: Any]])
        try FileManager.default.removeItem(atPath: lockFile)
        let lock = try #require(held.first { $0["check"] as? String == "lock file" }?["detail"] as? String)
        #expect(lock.contains("held by process \(getpid()) (swiftpm-testing-helper) for "), "\(lock)")
        #expect(lock.hasSuffix(" s, which is running"), "\(lock)")
    }

    @Test func theCustomFormOpensAnyFileAndOptionsThatDoNotFitAreUsageErrors() throws {
        let file = folder.appendingPathComponent("tool/cache.json")
        try plant("v1_single_account", at: file)
        let status = try json(try run(["status", "--json", "--store", "msal-file", "--path", file.path]))
        #expect(status["entries"] as? Int == 5)
        #expect(status["group"] as? String == "msal-file")
        // Global options may precede the command, the shared cache's too.
        #expect(try run(["--store", "msal-file", "--path", file.path, "list", "tokens"]).status == 0)
        for arguments in [
            ["status", "--store", "msal-file"], ["status", "--store", "file", "--path", file.path],
            ["status", "--store", "azure-cli", "--path", file.path],
            ["status", "--store", "azure-cli", "--passphrase-env", FileStore.passphraseVariable],
            ["status", "--store", "msal-keyring", "--attribute", "a=b"],
            ["status", "--store", "msal-keyring", "--schema", "s"],
            ["status", "--store", "msal-file", "--path", file.path, "--schema", "s"],
        ] {
            let result = try run(arguments)
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect(result.stderrLines.count == 1, "\(arguments): \(result)")
        }
    }

    /// `--path` and `--lock-file` name files from the working directory, as a shell does.
    @Test func relativePathsAreTheWorkingDirectorys() throws {
        let file = folder.appendingPathComponent("tool/cache.json")
        try plant("v1_single_account", at: file)
        let status = try Cachetool.run(
            ["status", "--json", "--store", "msal-file", "--path", "cache.json", "--lock-file", "./cache.json.lockfile"],
            environment: environment, removing: ["AZURE_CONFIG_DIR"], in: file.deletingLastPathComponent())
        #expect(status.status == 0, "\(status)")
        #expect(try json(status)["entries"] as? Int == 5)
        #expect(try json(status)["location"] as? String == file.path, "\(status)")
    }

    @Test func aMissingCacheIsNotFoundAndNothingIsCreated() throws {
        let before = try snapshot()
        for arguments in [["status"], ["list", "all"], ["export", "-"], ["clear", "--all", "--yes"], ["doctor"]] {
            let result = try run(arguments + ["--store", "azure-cli"])
            if arguments == ["doctor"] {
                #expect(result.status == 0, "\(result)")
            } else {
                #expect(result.status == 3, "\(arguments): \(result)")
                #expect(result.stderr.contains(azureCLIFile.path))
            }
        }
        #expect(try snapshot() == before)
    }

    // MARK: Bridging and moving

    @Test func exportFromAzureCLIImportsIntoASealedGroupAndLeavesAzureCLISignedIn() throws {
        let vector = try plant("v3_foci_two_clients")
        let group = [
            "--store", "file", "--group", "com.example.bridge", "--passphrase-env", FileStore.passphraseVariable,
        ]
        let exported = try run(["export", "-", "--include-secrets", "--store", "azure-cli"])
        try #require(exported.status == 0, "\(exported)")
        let imported = try run(["import", "-"] + group, input: exported.stdoutBytes)
        #expect(imported.status == 0, "\(imported)")
        #expect(try run(["export", "-", "--include-secrets"] + group).stdoutBytes == vector)
        #expect(try Data(contentsOf: azureCLIFile) == vector)
        // And back into another tool's file.
        let target = folder.appendingPathComponent("elsewhere/cache.json")
        let back = try run(
            ["import", "-", "--store", "msal-file", "--path", target.path], input: exported.stdoutBytes)
        #expect(back.status == 0, "\(back)")
        #expect(back.stderr.contains("cannot be sealed"))
        #expect(try Data(contentsOf: target) == vector)
    }

    @Test func moveEmptiesAzureCLIsDocumentAndKeepsEveryEntryInASealedGroup() throws {
        let vector = try plant("v2_two_accounts_two_tenants")
        let before = try #require(
            try run(["list", "all", "--json", "--store", "azure-cli"]).json() as? [[String: Any]])
        let group = ["--group", "com.example.moved", "--passphrase-env", FileStore.passphraseVariable]
        let refused = try run(["move", "--from-store", "azure-cli", "--to-store", "file"] + group)
        #expect(refused.status == 2, "\(refused)")
        #expect(try Data(contentsOf: azureCLIFile) == vector)

        let moved = try run(["move", "--from-store", "azure-cli", "--to-store", "file", "--yes", "--json"] + group)
        let report = try json(moved)
        #expect(report["entries"] as? Int == before.count)
        #expect((report["consequences"] as? [String])?.contains { $0.contains("Azure CLI is signed out") } == true)

        // The document is still valid MSAL JSON, with no entry left.
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: azureCLIFile)) as? [String: Any])
        for section in ["AccessToken", "RefreshToken", "IdToken", "Account", "AppMetadata"] {
            #expect((document[section] as? [String: Any])?.isEmpty == true, "\(section) was not emptied")
        }
        let sealed = ["--store", "file"] + group
        let after = try #require(try run(["list", "all", "--json"] + sealed).json() as? [[String: Any]])
        #expect(Set(after.compactMap { $0["key"] as? String }) == Set(before.compactMap { $0["key"] as? String }))
        #expect(try run(["export", "-", "--include-secrets"] + sealed).stdoutBytes == vector)
        let status = try json(try run(["status", "--json"] + sealed))
        #expect(status["protection"] as? String == "passphrase")

        // A second move finds nothing to move, and a move onto a group with entries is refused.
        #expect(
            try run(["move", "--from-store", "azure-cli", "--to-store", "file", "--yes"] + group).stdout.contains(
                "Nothing to move"))
        try plant("v1_single_account")
        let onto = try run(["move", "--from-store", "azure-cli", "--to-store", "file", "--yes"] + group)
        #expect(onto.status == 2, "\(onto)")
        #expect(onto.stderr.contains("already holds entries"))
        #expect(try Data(contentsOf: azureCLIFile) == (try Data(contentsOf: TestFiles.vector("v1_single_account"))))
    }

    // MARK: discover

    @Test func discoverFindsAPlantedAzureCLICacheAndOurGroupsAndCreatesNothing() throws {
        try plant("v1_single_account")
        try plant("v3_foci_two_clients", at: home.appendingPathComponent(".IdentityService/msal.cache.nocae"))
        let ours = try run(
            ["import", TestFiles.vector("v2_two_accounts_two_tenants").path, "--store", "file", "--group", "com.example.ours"]
                + ["--passphrase-env", FileStore.passphraseVariable])
        try #require(ours.status == 0, "\(ours)")
        let before = try snapshot()

        let listed = try run(["discover", "--json", "--passphrase-env", FileStore.passphraseVariable])
        #expect(listed.status == 0, "\(listed)")
        let caches = try #require(try listed.json() as? [[String: Any]])
        let azure = try #require(caches.first { $0["name"] as? String == "azure-cli" }, "\(caches)")
        #expect(azure["store"] as? String == "msal-file")
        #expect(azure["protection"] as? String == "plaintextFile")
        #expect(azure["sealed"] as? Bool == false)
        #expect(azure["entries"] as? Int == 5)
        #expect(azure["accounts"] as? Int == 1)
        #expect(azure["location"] as? String == azureCLIFile.path)
        #expect(azure["command"] as? String == "cachetool status --store azure-cli")
        let identity = try #require(caches.first { $0["name"] as? String == "azure-identity-file" }, "\(caches)")
        #expect(identity["entries"] as? Int == 8)
        let group = try #require(caches.first { $0["name"] as? String == "com.example.ours" }, "\(caches)")
        #expect(group["store"] as? String == "file")
        #expect(group["sealed"] as? Bool == true)
        #expect(group["entries"] as? Int == 14)

        let human = try run(["discover"], removing: ["DBUS_SESSION_BUS_ADDRESS"])
        #expect(human.status == 0, "\(human)")
        #expect(human.stdout.contains("cachetool status --store azure-cli"))
        // Each listed command opens what it lists.
        let command = try #require(azure["command"] as? String).split(separator: " ").dropFirst().map(String.init)
        #expect(try run(command).status == 0)
        #expect(try snapshot() == before, "discover created or changed something")
    }

    func run(_ arguments: [String], removing: [String]) throws -> Cachetool.Run {
        try Cachetool.run(arguments, environment: environment, removing: removing + ["AZURE_CONFIG_DIR"])
    }

    // MARK: Bad input

    @Test(arguments: [#"{"AccessToken": {"#, "[1, 2]", #"{"AccessToken": []}"#, "not json at all"])
    func aDamagedDocumentIsReportedAndNeverWrittenOver(text: String) throws {
        try FileManager.default.createDirectory(at: azureCLIFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: azureCLIFile)
        let before = try snapshot()
        for arguments in [
            ["status"], ["list", "all"], ["export", "-"], ["clear", "--all", "--yes"],
            ["import", TestFiles.vector("v1_single_account").path],
            [
                "move", "--to-store", "file", "--group", "com.example.x", "--yes", "--passphrase-env",
                FileStore.passphraseVariable,
            ],
        ] {
            let store = arguments.first == "move" ? ["--from-store", "azure-cli"] : ["--store", "azure-cli"]
            let result = try run(arguments + store)
            #expect(result.status == 8, "\(arguments): \(result)")
            #expect(result.stderrLines.count == 1, "\(arguments): \(result)")
            #expect(result.stderr.contains("is not an MSAL cache document"), "\(arguments): \(result)")
            #expect(result.stderr.contains(azureCLIFile.path))
        }
        #expect(try Data(contentsOf: azureCLIFile) == Data(text.utf8))
        #expect(try snapshot() == before, "a failed command left something behind")
    }
}
