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
    static func run(_ arguments: [String], input: Data? = nil, environment: [String: String] = [:], removing: [String] = [])
        throws -> Run
    {
        try runProgram(binary, arguments, input: input, environment: environment, removing: removing)
    }

    static func runProgram(
        _ program: URL, _ arguments: [String], input: Data?, environment: [String: String], removing: [String] = []
    ) throws -> Run {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
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

/// Files the tests share: msal-python's vectors, scratch folders.
enum TestFiles {
    static let vectorNames = ["v1_single_account", "v2_two_accounts_two_tenants", "v3_foci_two_clients"]

    /// A vector written by msal-python 1.39.0 (the copies the library's tests use).
    static func vector(_ name: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("SecureTokenCacheTests/Fixtures/\(name).json")
    }

    /// Every `secret` value in an MSAL JSON file.
    static func secrets(in file: URL) throws -> [String] {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        var secrets: [String] = []
        for case let section as [String: Any] in document.values {
            for case let entry as [String: Any] in section.values {
                if let secret = entry["secret"] as? String, !secret.isEmpty { secrets.append(secret) }
            }
        }
        return secrets
    }

    /// One folder per test process for every scratch folder, removed when the process exits.
    static let scratchRoot: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cachetool-tests-\(getpid())-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(
            at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        atexit { try? FileManager.default.removeItem(at: TestFiles.scratchRoot) }
        return url
    }()

    /// A new empty folder, mode 0700.
    static func scratch() throws -> URL {
        let url = scratchRoot.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(
            at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return url
    }

    static func write(_ text: String, name: String = "input.json") throws -> URL {
        let url = try scratch().appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url
    }
}

/// File-store groups for the persistence tests.
enum FileStore {
    /// The file store is always in the build: its tests run everywhere and fail, never skip.
    static let available = true

    static let passphraseVariable = "CACHETOOL_TEST_PASSPHRASE"

    /// Global options for a file-store group in `folder`, with the passphrase from the environment.
    static func options(_ folder: URL, group: String = "com.example.cachetool-tests") -> [String] {
        ["--store", "file", "--dir", folder.path, "--group", group, "--passphrase-env", passphraseVariable]
    }

    static let environment = [passphraseVariable: "correct horse battery staple"]
}

/// Whether `CacheGroup.open` supports the keyring store and a private keyring is running
/// (`scripts/with-keyring` sets `STC_KEYRING_REQUIRED=1`). Probing opens a group in the
/// keyring, so it is only done inside that private keyring, never in a user's own.
enum KeyringStore {
    static let required = ProcessInfo.processInfo.environment["STC_KEYRING_REQUIRED"] == "1"

    /// Keyring tests run inside `scripts/with-keyring` (always in CI), where a broken keyring
    /// fails them instead of skipping them.
    static let available = required
}

/// A store the persistence tests run against, and a fresh group in it.
enum StoreUnderTest: String, CaseIterable, Sendable, CustomStringConvertible {
    case file, keyring

    var description: String { rawValue }

    var isAvailable: Bool { self == .file ? FileStore.available : KeyringStore.available }

    /// The stores this build and environment offer.
    static var available: [StoreUnderTest] { allCases.filter(\.isAvailable) }

    /// Global options and environment for a new, empty group in this store.
    func newGroup() throws -> (options: [String], environment: [String: String]) {
        switch self {
        case .file:
            return (FileStore.options(try TestFiles.scratch()), FileStore.environment)
        case .keyring:
            return (["--store", "keyring", "--group", "com.example.cachetool-\(UUID().uuidString.lowercased())"], [:])
        }
    }
}
