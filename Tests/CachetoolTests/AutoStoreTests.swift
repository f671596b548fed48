import Foundation
import Testing

/// `--store auto` on a machine without a session bus: the encrypted file store, and the reason.
@Suite(.timeLimit(.minutes(1))) struct AutoStoreTests {
    @Test func withoutASessionBusAutoUsesTheFileStoreAndSaysWhy() throws {
        let folder = try TestFiles.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let environment = ["XDG_CONFIG_HOME": folder.appendingPathComponent("config").path]
        let options = ["--group", "com.example.auto", "--store", "auto", "--dir", folder.appendingPathComponent("groups").path]
        let imported = try Cachetool.run(
            ["import", TestFiles.vector("v1_single_account").path] + options, environment: environment,
            removing: ["DBUS_SESSION_BUS_ADDRESS"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let status = try Cachetool.run(
            ["status", "--json"] + options, environment: environment, removing: ["DBUS_SESSION_BUS_ADDRESS"])
        #expect(status.status == 0, "\(status.stderr)")
        let json = try #require(try status.json() as? [String: Any])
        #expect(json["store"] as? String == "file")
        #expect(json["protection"] as? String == "keyFile")
        #expect((json["reason"] as? String)?.contains("file store") == true, "\(json)")
        #expect(json["entries"] as? Int == 5)
        // The key went to XDG_CONFIG_HOME, 0600, not next to the data.
        let key = folder.appendingPathComponent("config/secure-token-cache/keys/com.example.auto.key").path
        let attributes = try FileManager.default.attributesOfItem(atPath: key)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    /// Commands that only read or remove never create a group, a key file or a lock: without a
    /// session bus, `auto` has nowhere to find the default group, and says so.
    @Test(arguments: [["status"], ["list", "tokens"], ["clear", "--all", "--yes"], ["export", "-"]])
    func readOnlyCommandsCreateNothing(_ command: [String]) throws {
        let folder = try TestFiles.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let environment = [
            "HOME": folder.appendingPathComponent("home").path, "XDG_DATA_HOME": folder.appendingPathComponent("data").path,
            "XDG_CONFIG_HOME": folder.appendingPathComponent("config").path,
        ]
        let run = try Cachetool.run(
            command + ["--store", "auto"], environment: environment, removing: ["DBUS_SESSION_BUS_ADDRESS"])
        #expect(run.status == 3, "\(run)")
        #expect(run.stderr.contains("no group com.microsoft.identity.universalstorage"), "\(run.stderr)")
        let created = FileManager.default.enumerator(atPath: folder.path)?.allObjects as? [String] ?? []
        #expect(created.isEmpty, "created \(created)")
    }
}
