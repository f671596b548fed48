import Foundation
import Testing

@testable import SecureTokenCache

/// Where the keyring tests run, and the tools they use.
///
/// Keyring suites run only when `STC_KEYRING_REQUIRED=1` (set by `scripts/with-keyring`, which
/// starts a private bus and an unlocked throwaway gnome-keyring). With the variable set they run
/// and fail if the keyring is missing; without it they are skipped, so a developer's own keyring
/// is never touched.
enum KeyringTestSupport {
    /// Whether the private test keyring was promised.
    static let keyringRequired = ProcessInfo.processInfo.environment["STC_KEYRING_REQUIRED"] == "1"

    /// A group name no other test uses.
    static func uniqueGroup(_ prefix: String) -> String {
        "stc-test-\(prefix)-\(UUID().uuidString.prefix(8).lowercased())"
    }

    /// A record with a text payload.
    static func record(_ name: String, _ payload: String, kind: RecordKind = .accessToken) -> Record {
        Record(id: RecordID(kind: kind, name: name), payload: Array(payload.utf8))
    }

    /// Payloads by record name, for comparisons.
    static func payloads(_ records: [Record]) -> [String: String] {
        Dictionary(uniqueKeysWithValues: records.map { ($0.id.name, String(decoding: $0.payload, as: UTF8.self)) })
    }

    /// Changes as short strings (`"put NAME=PAYLOAD"`, `"delete NAME"`), for comparisons.
    static func describe(_ changes: [RecordChange]) -> [String] {
        changes.map { change in
            switch change {
            case .put(let record): "put \(record.id.name)=\(String(decoding: record.payload, as: UTF8.self))"
            case .delete(let id): "delete \(id.name)"
            }
        }
    }

    /// Applies `update` to payloads by record name, as the engine applies it to its index.
    static func apply(_ update: StoreUpdate, to content: inout [String: String]) {
        switch update {
        case .unchanged: break
        case .reload(let records, _): content = payloads(records)
        case .changes(let changes, _):
            for change in changes {
                switch change {
                case .put(let record): content[record.id.name] = String(decoding: record.payload, as: UTF8.self)
                case .delete(let id): content[id.name] = nil
                }
            }
        }
    }

    /// The helper executable next to the test bundle (`.build/<triple>/debug/stc-keyring-helper`).
    static var helperPath: String {
        let bundle = URL(
            fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? CommandLine.arguments[0])
        return bundle.deletingLastPathComponent().appendingPathComponent("stc-keyring-helper").path
    }

    /// The result of running a program.
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs a program and waits for it.
    @discardableResult
    static func run(
        _ path: String,
        _ arguments: [String],
        environment: [String: String]? = nil,
        stdin: String? = nil
    ) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self)
        )
    }

    /// Runs `stc-keyring-helper` with `arguments`; `environment` replaces the inherited one.
    static func helper(_ arguments: [String], environment: [String: String]? = nil) throws -> Output {
        let path = helperPath
        try #require(FileManager.default.isExecutableFile(atPath: path), "stc-keyring-helper is not built at \(path)")
        return try run(path, arguments, environment: environment)
    }

    /// This process's environment with changes (`nil` removes a variable).
    static func environment(_ changes: [String: String?]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in changes { environment[key] = value }
        return environment
    }

    /// The path of a program on `PATH`, or `nil`.
    static func which(_ program: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(program)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The pid of the process owning `org.freedesktop.secrets` on the session bus.
    static func secretServicePid() throws -> pid_t {
        let dbusSend = try #require(which("dbus-send"))
        let output = try run(
            dbusSend,
            [
                "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:org.freedesktop.secrets",
            ])
        let pid = output.stdout.split(whereSeparator: \.isWhitespace).last.flatMap { pid_t($0) }
        return try #require(pid, "no pid for org.freedesktop.secrets: \(output.stdout) \(output.stderr)")
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which its header
    /// declares only for `_GNU_SOURCE` builds, out of Swift's reach.
    private static let closeFrom: CloseFrom = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else {
            fatalError("this glibc has no posix_spawn_file_actions_addclosefrom_np (2.34 or later has)")
        }
        return unsafeBitCast(symbol, to: CloseFrom.self)
    }()

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

    /// Runs a program that daemonizes (forks and exits) and waits for the first process only.
    ///
    /// Not Foundation's `Process`: its `waitUntilExit()` did not return for a daemonizing child
    /// here. The child gets an empty signal mask (the test runner blocks SIGTERM, and a daemon
    /// must not inherit that), /dev/null as stdout and stderr, and no other file of the runner's:
    /// the daemon outlives the test, and a pipe it held (the stdin of a fake authority another
    /// test runs, which exits when that closes) would never close.
    static func spawnAndWait(_ path: String, _ arguments: [String], stdin: String) throws -> Int32 {
        var input: [Int32] = [0, 0]
        try #require(pipe(&input) == 0)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_addclose(&actions, input[0])
        posix_spawn_file_actions_addclose(&actions, input[1])
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        try #require(closeFrom(&actions, 3) == 0, "posix_spawn_file_actions_addclosefrom_np failed")
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        close(input[0])
        guard spawned == 0 else {
            close(input[1])
            Issue.record("posix_spawn \(path) failed: \(spawned)")
            return -1
        }
        try #require(spawned == 0, "posix_spawn \(path) failed: \(spawned)")
        _ = Array(stdin.utf8).withUnsafeBytes { write(input[1], $0.baseAddress, $0.count) }
        close(input[1])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return 0 }  // ECHILD: already reaped elsewhere
        }
        return (status >> 8) & 0xff
    }

    /// Unlocks the login collection with the test password ("pw") by replacing the keyring daemon
    /// with one started with `--unlock` (gnome-keyring reads the same keyring file, so every item
    /// is still there), then waits until the collection answers unlocked.
    static func unlockTestKeyring() throws {
        let daemon = try #require(which("gnome-keyring-daemon"))
        let oldPid = try secretServicePid()
        let status = try spawnAndWait(daemon, ["--replace", "--unlock", "--components=secrets"], stdin: "pw")
        try #require(status == 0, "gnome-keyring-daemon --replace --unlock exited with status \(status)")
        // Wait for the new daemon to own the name before any libsecret call: libsecret calls
        // auto-start, and in the gap between the two daemons that would activate a third,
        // locked one.
        let address = try #require(SessionBusConnection.environmentAddress())
        // Limits far above what a call takes: in CI's sanitizer pass, at the lowest priority beside
        // the main tests, a bus that is there may not answer for seconds.
        let bus = try SessionBusConnection(address: address, timeout: .seconds(10))
        // Waited for by the clock, a minute at most for both waits together: there, the new daemon
        // may take seconds to start.
        let deadline = ContinuousClock.now + .seconds(60)
        var replaced = false
        while !replaced, ContinuousClock.now < deadline {
            if (try? bus.nameHasOwner(SessionBusConnection.secretServiceName)) == true, (try? secretServicePid()) != oldPid {
                replaced = true
            } else {
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        try #require(replaced, "the replacing gnome-keyring-daemon did not take over the bus name")
        KeyringClient.forgetServiceConnection()
        let client = KeyringClient(options: KeyringOptions(callTimeout: .seconds(5), probeTimeout: .seconds(5)))
        while ContinuousClock.now < deadline {
            if (try? client.isDefaultCollectionLocked()) == false { return }
            Thread.sleep(forTimeInterval: 0.1)
            KeyringClient.forgetServiceConnection()
        }
        Issue.record("the test keyring did not come back unlocked")
    }
}

extension GroupDirectory {
    /// The keyring group folder of `name` under `root` (default: the root a KeyringStore opened
    /// without one uses), created if needed.
    static func madeKeyring(_ name: String, root: String? = nil) throws -> GroupDirectory {
        let directory = try GroupDirectory.keyring(root: root ?? GroupDirectory.defaultRoot(), name: name)
        try directory.createIfNeeded()
        return directory
    }
}
