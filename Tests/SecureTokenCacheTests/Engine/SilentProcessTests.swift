import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

/// The refresh lock excludes other processes (not just other tasks), and the demo binary runs:
/// what the multi-process suite relies on, checked without the file store.
@Suite(.tags(.multiProcess), .timeLimit(.minutes(3))) struct SilentProcessTests {
    /// Runs `python3 -c script args...` and returns its exit status.
    static func python(_ script: String, _ arguments: [String]) async throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [ProcessInfo.processInfo.environment["STC_PYTHON"] ?? "python3", "-c", script] + arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return await process.exit().status
    }

    static let tryLock = """
        import fcntl, sys
        f = open(sys.argv[1], "a")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            sys.exit(7)
        """

    @Test func anotherProcessCannotTakeAHeldRefreshLock() async throws {
        let folder = TemporaryDirectory()
        let directory = try GroupDirectory(root: folder.path, name: "silent-lock-process-test")
        try directory.createIfNeeded()
        let key = "bob.tenant\nfamily:1"
        let path = RefreshLock.lockFile(for: key, in: directory)
        try await RefreshLock().withLock(group: directory.name, directory: directory, key: key, timeout: .seconds(1)) {
            let status = try await Self.python(Self.tryLock, [path])
            #expect(status == 7, "another process took a held refresh lock")
        }
        #expect(try await Self.python(Self.tryLock, [path]) == 0)
    }

    @Test
    func theDemoOpensAFileStoreGroup() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stc-demo-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try await SilentMultiProcessTests.launch([
            "accounts", "--authority", "http://127.0.0.1:9/common", "--client", Fixtures.clientA, "--store", "file",
            "--directory", directory, "--key-file", directory + ".key",
        ])
        defer { try? FileManager.default.removeItem(atPath: directory + ".key") }
        #expect(result.status == 0, "\(result.output)")
    }
}
