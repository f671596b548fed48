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
}
