import Foundation
import Testing

@testable import SecureTokenCache

/// A plain session bus with no Secret Service on it (and no service activation, so the bus cannot
/// start gnome-keyring on demand as the stock session configuration would).
final class PrivateBus {
    /// The bus address, for `DBUS_SESSION_BUS_ADDRESS`.
    let address: String
    private let process: Process
    private let folder: URL

    init() throws {
        let daemon = try #require(KeyringTestSupport.which("dbus-daemon"), "dbus-daemon is not installed")
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("stc-bus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let config = folder.appendingPathComponent("bus.conf")
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:dir=\(folder.path)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """.write(to: config, atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: daemon)
        process.arguments = ["--config-file=\(config.path)", "--nofork", "--print-address=1"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        address = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(!address.isEmpty, "dbus-daemon printed no address")
    }

    deinit {
        // SIGKILL, not terminate(): the child inherits the test runner's signal mask, in which
        // SIGTERM is blocked, so a SIGTERM would never arrive.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: folder)
    }
}
