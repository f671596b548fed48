import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

/// A plain session bus with no Secret Service on it (``PlainBusConfiguration``).
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
        try PlainBusConfiguration.text(listeningIn: folder.path).write(to: config, atomically: true, encoding: .utf8)
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
        process.kill()
        try? FileManager.default.removeItem(at: folder)
    }
}
