import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

/// The `stc-testhelper` executable, built next to the test bundle (the test target depends on it).
let testHelperPath: String? = {
    var candidates: [String] = []
    if let executable = Bundle.main.executablePath { candidates.append((executable as NSString).deletingLastPathComponent) }
    if let argument = CommandLine.arguments.first { candidates.append((argument as NSString).deletingLastPathComponent) }
    if let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
        candidates.append((link as NSString).deletingLastPathComponent)
    }
    candidates.append(Bundle.main.bundlePath)
    candidates.append(PackageRoot.url.appendingPathComponent(".build/debug").path)
    for directory in candidates {
        for path in [directory + "/stc-testhelper", (directory as NSString).deletingLastPathComponent + "/stc-testhelper"]
        where FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
    }
    return nil
}()

/// The group's passphrase provider as the helper opens it.
let helperPassphrase: any KeyProvider = try! PassphraseKeyProvider(passphrase: "multi-process passphrase", parameters: .minimum)

/// A running helper process.
final class Helper: @unchecked Sendable {
    let process = Process()
    let output = Pipe()
    /// Where its standard error goes: a file, not a pipe, so that a long crash report can never
    /// block it while the test reads its standard output.
    private let errors: String

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: try #require(testHelperPath, "stc-testhelper not found next to the tests"))
        process.arguments = arguments
        process.standardOutput = output
        errors = NSTemporaryDirectory() + "/stc-helper-\(UUID().uuidString).err"
        try #require(FileManager.default.createFile(atPath: errors, contents: nil))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        try process.run()
    }

    deinit { try? FileManager.default.removeItem(atPath: errors) }

    /// How a finished helper ended, and the last lines it wrote to standard error: for the
    /// message of a test that did not expect it to end so.
    var ending: String {
        let how = process.terminationReason == .uncaughtSignal ? "signal" : "exit status"
        let lines = (try? String(contentsOfFile: errors, encoding: .utf8))?.split(separator: "\n").suffix(12) ?? []
        return "\(how) \(process.terminationStatus); standard error: \(lines.isEmpty ? "nothing" : lines.joined(separator: "\n"))"
    }

    /// Waits for the process and returns its stdout lines.
    func finish() -> [String] {
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
    }
}
