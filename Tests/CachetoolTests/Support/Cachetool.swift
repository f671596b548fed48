import Foundation
import SecureTokenCache
import Testing

/// Runs the built `cachetool` binary as a separate process, as a user or a script would.
enum Cachetool {
    /// What one run of the binary did.
    struct Run: CustomStringConvertible {
        var status: Int32
        var stdout: String
        var stderr: String
        var stdoutBytes: Data

        var description: String { "exit \(status)\nstdout:\n\(stdout)\nstderr:\n\(stderr)" }

        /// The JSON value on standard output.
        func json() throws -> Any { try JSONSerialization.jsonObject(with: stdoutBytes, options: [.fragmentsAllowed]) }

        /// `doctor --json`'s checks by name.
        func doctorChecks() throws -> [String: [String: Any]] {
            let checks = try #require(try json() as? [[String: Any]], "\(self)")
            return Dictionary(uniqueKeysWithValues: checks.map { ($0["check"] as? String ?? "", $0) })
        }

        /// The stderr lines, without the empty one after the last newline.
        var stderrLines: [Substring] { stderr.split(separator: "\n", omittingEmptySubsequences: true) }
    }

    /// The binary: `$CACHETOOL` when set, else `cachetool` in the build products folder this
    /// test runner was started from (SwiftPM builds it first: the test target depends on it).
    static let binary: URL = {
        if let path = ProcessInfo.processInfo.environment["CACHETOOL"] { return URL(fileURLWithPath: path) }
        let runner = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var folder = URL(fileURLWithPath: runner).deletingLastPathComponent()
        // The runner may be inside a bundle folder (`*.xctest/...`).
        while !FileManager.default.isExecutableFile(atPath: folder.appendingPathComponent("cachetool").path), folder.path != "/" {
            folder.deleteLastPathComponent()
        }
        return folder.appendingPathComponent("cachetool")
    }()

    /// Runs `cachetool arguments` with standard input from `input` (never a terminal), in this
    /// process's environment plus `environment`, minus the variables in `removing`.
    /// Runs in `directory` when one is given, else in this process's working directory.
    static func run(
        _ arguments: [String], input: Data? = nil, environment: [String: String] = [:], removing: [String] = [],
        in directory: URL? = nil
    ) throws -> Run {
        try runProgram(binary, arguments, input: input, environment: environment, removing: removing, in: directory)
    }

    static func runProgram(
        _ program: URL, _ arguments: [String], input: Data?, environment: [String: String], removing: [String] = [],
        in directory: URL? = nil
    ) throws -> Run {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        var env = ProcessInfo.processInfo.environment
        for name in removing { env[name] = nil }
        for (name, value) in environment { env[name] = value }
        process.environment = env
        let output = Pipe()
        let errors = Pipe()
        let inputPipe = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = inputPipe
        try process.run()
        if let input { inputPipe.fileHandleForWriting.write(input) }
        try inputPipe.fileHandleForWriting.close()
        // Drain stderr on another thread so a chatty stderr can't block a large stdout.
        let errorData = LockedData()
        let reader = Thread { errorData.set(errors.fileHandleForReading.readDataToEndOfFile()) }
        reader.start()
        let outData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errorData.isSet { usleep(1000) }
        return Run(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errorData.value, as: UTF8.self), stdoutBytes: outData)
    }

    /// Runs `cachetool arguments` on a pseudo-terminal (through util-linux `script`), typing
    /// `answer`; standard output and standard error arrive merged in ``Run/stdout``.
    static func runOnTerminal(_ arguments: [String], answer: String, environment: [String: String] = [:]) throws -> Run {
        let quoted = ([binary.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        return try runProgram(
            URL(fileURLWithPath: "/usr/bin/script"), ["-q", "-e", "-c", quoted.joined(separator: " "), "/dev/null"],
            input: Data(answer.utf8), environment: environment)
    }

    final class LockedData: @unchecked Sendable {
        private let lock = NSLock()
        private var data: Data?
        func set(_ value: Data) { lock.withLock { data = value } }
        var isSet: Bool { lock.withLock { data != nil } }
        var value: Data { lock.withLock { data ?? Data() } }
    }
}
