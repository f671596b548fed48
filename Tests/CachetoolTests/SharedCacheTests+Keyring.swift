import Foundation
import SecureTokenCache
import TestSupport
import Testing

extension SharedCacheTests {
    /// The keyring kinds as `--store`, inside the private keyring of `scripts/with-keyring`:
    /// `status` on an item described by options, moving the Python dialect into the .NET one,
    /// and `discover`, which must leave the item, its signal file and its lock file alone. The
    /// presets' items are the same in every test (their attributes are fixed), so the tests run
    /// one at a time and each starts by removing them.
    @Suite(.tags(.keyring), .serialized, .enabled(if: KeyringStore.available))
    struct Keyring {
        let files: SharedCacheTests

        init() throws {
            files = try SharedCacheTests()
            let cleared = try Self.secretTool(["clear", "MsalClientID", "Microsoft.Developer.IdentityService"])
            // secret-tool clear exits 1 when nothing matched.
            try #require(cleared.status <= 1, "\(cleared)")
        }

        /// The azure-identity item's signal file (Python, JavaScript, Java).
        var pythonSignalFile: URL { files.home.appendingPathComponent(".IdentityService/msal.cache.nocae") }

        static func secretTool(_ arguments: [String]) throws -> Cachetool.Run {
            try Cachetool.runProgram(URL(fileURLWithPath: "/usr/bin/secret-tool"), arguments, input: nil, environment: [:])
        }

        /// The secret of the one item with `attributes`, as stored.
        static func storedText(_ attributes: [String]) throws -> String {
            let found = try secretTool(["lookup"] + attributes)
            try #require(found.status == 0, "no item with \(attributes): \(found)")
            return found.stdout
        }

        /// How many items carry the attribute every azure-identity item has.
        static func identityItemCount() throws -> Int {
            let listed = try secretTool(["search", "--all", "MsalClientID", "Microsoft.Developer.IdentityService"])
            return (listed.stdout + listed.stderr).split(separator: "\n").filter { $0.hasPrefix("[/") }.count
        }

        static let pythonItem = ["xdg:schema", "msal.cache.nocae", "MsalClientID", "Microsoft.Developer.IdentityService"]
        static let dotNetItem = [
            "MsalClientID", "Microsoft.Developer.IdentityService", "Microsoft.Developer.IdentityService", "1.0.0.0",
        ]

        /// Puts msal-python's vector `name` into the azure-identity item, as a tool signing in would.
        func plantPythonItem(_ name: String) throws {
            let planted = try files.run(["import", TestFiles.vector(name).path, "--store", "azure-identity"])
            try #require(planted.status == 0, "\(planted)")
        }

        func entryKeys(_ store: String) throws -> Set<String> {
            let listed = try files.run(["list", "all", "--json", "--store", store])
            let entries = try #require(try listed.json() as? [[String: Any]], "\(listed)")
            return Set(entries.compactMap { $0["key"] as? String })
        }

        @Test func statusReadsAnItemDescribedByItsSchemaAndAttribute() throws {
            let name = "stc-\(UUID().uuidString.prefix(8).lowercased())"
            let schema = "org.securetokencache.cachetool.\(name)"
            // The signal file where cachetool looks by default: ~/.IdentityService/<schema>.
            let item = MSALSharedCache.KeyringItem(
                schema: schema, attributes: ["StcTest": name], label: "STC test \(name)",
                signalFile: files.home.appendingPathComponent(".IdentityService/\(schema)").path)
            var configuration = CacheConfiguration(sharedCache: .keyring(item))
            configuration.directory = files.folder.appendingPathComponent("writer").path
            let vector = try Data(contentsOf: TestFiles.vector("v1_single_account"))
            try CacheGroup.open("writer", configuration: configuration).importMSAL(vector)
            let text = try Self.storedText(["StcTest", name])
            let before = try files.snapshot()

            let status = try files.json(
                try files.run([
                    "status", "--store", "msal-keyring", "--schema", schema, "--attribute", "StcTest=\(name)", "--json",
                ]))
            #expect(status["store"] as? String == "msal-keyring")
            #expect(status["protection"] as? String == "keyringItem")
            #expect(status["entries"] as? Int == 5)
            #expect((status["location"] as? String)?.contains(schema) == true, "\(status)")
            #expect((status["warnings"] as? [String])?.contains { $0.contains("cannot be sealed") } == true, "\(status)")
            #expect(try Self.storedText(["StcTest", name]) == text)
            #expect(try files.snapshot() == before, "status created or changed something")
        }

        @Test func exportImportAndMoveBridgeThePythonDialectIntoTheDotNetOne() throws {
            let vector = try Data(contentsOf: TestFiles.vector("v3_foci_two_clients"))
            try plantPythonItem("v3_foci_two_clients")
            let keys = try entryKeys("azure-identity")
            #expect(keys.count == 8)

            // A copy: both tools signed in afterwards.
            let exported = try files.run(["export", "-", "--include-secrets", "--store", "azure-identity"])
            #expect(exported.stdoutBytes == vector, "\(exported)")
            let imported = try files.run(["import", "-", "--store", "azure-identity-dotnet"], input: exported.stdoutBytes)
            #expect(imported.status == 0, "\(imported)")
            #expect(
                try files.run(["export", "-", "--include-secrets", "--store", "azure-identity-dotnet"]).stdoutBytes == vector)
            #expect(try entryKeys("azure-identity") == keys)
            // The .NET item holds Base64 of the document, as .NET reads it.
            let base64 = try Self.storedText(Self.dotNetItem).trimmingCharacters(in: .whitespacesAndNewlines)
            let decoded = try #require(Data(base64Encoded: base64), "the .NET item is not Base64: \(base64.prefix(40))")
            let document = try #require(try JSONSerialization.jsonObject(with: decoded) as? [String: Any])
            let original = try #require(try JSONSerialization.jsonObject(with: vector) as? [String: Any])
            #expect((document["RefreshToken"] as? NSDictionary) == (original["RefreshToken"] as? NSDictionary))

            // A move: the Python dialect emptied, everything in the .NET one.
            let cleared = try files.run(["clear", "--all", "--yes", "--store", "azure-identity-dotnet"])
            try #require(cleared.status == 0, "\(cleared)")
            let moved = try files.json(
                try files.run([
                    "move", "--from-store", "azure-identity", "--to-store", "azure-identity-dotnet", "--yes", "--json",
                ]))
            #expect(moved["entries"] as? Int == keys.count)
            let consequences = try #require(moved["consequences"] as? [String], "\(moved)")
            #expect(consequences.contains { $0.contains("azure-identity is left empty") }, "\(consequences)")
            #expect(consequences.contains { $0.contains("not sealed") }, "\(consequences)")
            #expect(try entryKeys("azure-identity-dotnet") == keys)
            #expect(try entryKeys("azure-identity").isEmpty)
            #expect(
                try files.run(["export", "-", "--include-secrets", "--store", "azure-identity-dotnet"]).stdoutBytes == vector)
        }

        @Test func discoverListsTheItemAndLeavesItItsSignalFileAndItsLockFileAlone() throws {
            try plantPythonItem("v3_foci_two_clients")
            let text = try Self.storedText(Self.pythonItem)
            let items = try Self.identityItemCount()
            let signal = try FileManager.default.attributesOfItem(atPath: pythonSignalFile.path)
            let before = try files.snapshot()

            let listed = try files.run(["discover", "--json"])
            #expect(listed.status == 0, "\(listed)")
            let caches = try #require(try listed.json() as? [[String: Any]])
            let identity = try #require(caches.first { $0["name"] as? String == "azure-identity" }, "\(caches)")
            #expect(identity["store"] as? String == "msal-keyring")
            #expect(identity["state"] as? String == "found")
            #expect(identity["protection"] as? String == "keyringItem")
            #expect(identity["sealed"] as? Bool == false)
            #expect(identity["entries"] as? Int == 8)
            #expect(identity["command"] as? String == "cachetool status --store azure-identity")

            #expect(try Self.storedText(Self.pythonItem) == text, "the item was changed")
            #expect(try Self.identityItemCount() == items, "discover created or removed an item")
            let after = try FileManager.default.attributesOfItem(atPath: pythonSignalFile.path)
            #expect(after[.modificationDate] as? Date == signal[.modificationDate] as? Date, "the signal file was touched")
            #expect(after[.size] as? Int == signal[.size] as? Int)
            #expect(!FileManager.default.fileExists(atPath: pythonSignalFile.path + ".lockfile"))
            #expect(try files.snapshot() == before, "discover created or changed a file")
        }
    }
}
