import Foundation
import Testing

@testable import SecureTokenCache
@testable import stc_testhelper

/// Which lock msal-extensions 1.3.1 takes: it uses portalocker's flock when portalocker
/// imports, else its own `O_EXCL` lock file. Each has its own virtual environment
/// (`scripts/python-env [--portalocker]`), and the shared-cache peer tests run against both.
enum ExtensionsLock: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case filelock
    case portalocker

    var testDescription: String { "msal-extensions with \(rawValue)" }

    /// The interpreter whose msal-extensions takes this lock.
    func interpreter() throws -> String { try MSALPython.interpreter(portalocker: self == .portalocker) }

    /// Runs `msal_ext_peer.py arguments...` to its end; returns its standard output.
    @discardableResult
    func run(_ arguments: [String]) throws -> String {
        try MSALPython.run(try interpreter(), ["msal_ext_peer.py"] + arguments)
    }

    /// Starts `msal_ext_peer.py arguments...` as a process to talk to.
    func start(_ arguments: [String]) throws -> PeerProcess {
        try PeerProcess(try interpreter(), ["msal_ext_peer.py"] + arguments)
    }
}

/// A process the test talks to by lines: its standard input, and its standard output read line
/// by line (its standard error goes to the test's).
final class PeerProcess: @unchecked Sendable {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var pending: [UInt8] = []

    init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = MSALPython.supportDirectory
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// The next line of output, or `nil` at its end.
    func readLine() -> String? {
        let fd = output.fileHandleForReading.fileDescriptor
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            let count = Glibc.read(fd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                defer { pending = [] }
                return pending.isEmpty ? nil : String(decoding: pending, as: UTF8.self)
            }
            pending += buffer[..<count]
        }
    }

    /// Reads lines until one starts with `prefix`; returns it, or throws what came instead.
    @discardableResult
    func expect(_ prefix: String) throws -> String {
        var seen: [String] = []
        while let line = readLine() {
            if line.hasPrefix(prefix) { return line }
            seen.append(line)
        }
        process.waitUntilExit()
        throw MSALPython.Failure(
            description:
                "expected \"\(prefix)\" from \(process.executableURL?.lastPathComponent ?? "?") \(process.arguments ?? []), got \(seen) and the exit status \(process.terminationStatus)"
        )
    }

    /// Writes `line` to the process's standard input.
    func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

    /// Writes `line` and returns the answer.
    func ask(_ line: String) throws -> String {
        send(line)
        guard let answer = readLine() else { throw MSALPython.Failure(description: "no answer to \"\(line)\"") }
        return answer
    }

    /// Closes its standard input, then collects every line it printed and its exit status.
    func finish() -> (lines: [String], status: Int32) {
        closeInput()
        var lines: [String] = []
        while let line = readLine() { lines.append(line) }
        process.waitUntilExit()
        return (lines, process.terminationStatus)
    }

    func closeInput() { try? input.fileHandleForWriting.close() }

    /// Ends the process (continuing it first, should it be stopped) and waits for it.
    func end() {
        guard process.isRunning else { return }
        kill(pid, SIGCONT)
        kill(pid, SIGKILL)
        process.waitUntilExit()
    }
}

extension SharedPeerAccount {
    /// The account `msal_ext_peer.py account` prints with `lock`'s interpreter.
    init(_ lock: ExtensionsLock) throws {
        try self.init(json: lock.run(["account"]))
    }
}
