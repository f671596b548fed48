import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

/// Single sign-on across real processes: `stc-demo` processes of apps A, B (one family) and C
/// over one file-store group, against the fake authority.
///
/// Always runs: a missing `stc-demo` binary fails the tests.
@Suite(.tags(.multiProcess), .timeLimit(.minutes(3))) struct SilentMultiProcessTests {
    /// `stc-demo`, built next to the test bundle.
    static let demo: String? = {
        let path = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("stc-demo")
            .path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }()

    /// One group in a fresh folder, and a way to run an app's step on it.
    struct Apps {
        let authority: FakeAuthority
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stc-sso-\(UUID().uuidString)").path
        let group = "com.example.sso-test-\(UUID().uuidString.prefix(8).lowercased())"

        func run(_ client: String, _ command: String, _ extra: [String] = []) async throws -> (status: Int32, output: String) {
            let arguments =
                [
                    command, "--authority", try authority.authority().url, "--client", client, "--group", group, "--store",
                    "file",
                    "--directory", directory, "--key-file", directory + "/key",
                ] + extra
            return try await SilentMultiProcessTests.launch(arguments)
        }
    }

    /// Runs `stc-demo` with `arguments`, a lock timeout of 120 s and a keyring timeout of 60 s (in
    /// `environment` and `cwd` when given) and returns its exit status and output.
    static func launch(_ arguments: [String], environment: [String: String]? = nil, cwd: String? = nil) async throws -> (
        status: Int32, output: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(demo))
        // Long waits for the group's lock and the Secret Service: these tests are about who
        // refreshes, not about waiting, and in CI's sanitizer pass, at the lowest priority beside
        // the main tests, the processes (the keyring daemon's too) may not run for seconds.
        process.arguments = arguments + ["--lock-timeout", "120", "--keyring-timeout", "60"]
        if let environment { process.environment = environment }
        if let cwd { process.currentDirectoryURL = URL(fileURLWithPath: cwd) }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let (status, data) = await process.exit(readingToEndOf: output.fileHandleForReading)
        return (status, String(decoding: data, as: UTF8.self))
    }

    static func fingerprint(_ output: String) -> String? {
        output.range(of: "fingerprint ").map { String(output[$0.upperBound...].prefix(16)) }
    }

    @Test func signInInOneProcessGivesTheFamilySingleSignOnAndSignOutKeepsIt() async throws {
        let apps = Apps(authority: try FakeAuthority())
        defer { try? FileManager.default.removeItem(atPath: apps.directory) }

        #expect(try await apps.run(Fixtures.clientA, "sign-in").status == 0)
        #expect(try await apps.run(Fixtures.clientB, "accounts").output.contains("alice@contoso.com"))
        let silent = try await apps.run(Fixtures.clientB, "token")
        #expect(silent.status == 0 && silent.output.contains("from the authority"), "\(silent.output)")
        #expect(try await apps.authority.refreshRequests(Fixtures.clientB) == 1)

        #expect(try await apps.run(Fixtures.clientA, "sign-out").status == 0)
        #expect(try await apps.run(Fixtures.clientA, "accounts").output.contains("sees no account"))
        #expect(try await apps.run(Fixtures.clientA, "token", ["--username", "alice@contoso.com"]).status == 2)
        #expect(try await apps.run(Fixtures.clientB, "accounts").output.contains("alice@contoso.com"))
        let cached = try await apps.run(Fixtures.clientB, "token")
        #expect(cached.output.contains("from the cache"), "\(cached.output)")
        #expect(Self.fingerprint(cached.output) == Self.fingerprint(silent.output))
        #expect(try await apps.run(Fixtures.clientB, "token", ["--force-refresh"]).status == 0)

        // C is not in the family: interaction required, never A's token.
        let outsider = try await apps.run(Fixtures.clientC, "token", ["--username", "alice@contoso.com"])
        #expect(outsider.status == 2 && outsider.output.contains("client_mismatch"), "\(outsider.output)")

        // Wipe removes the account for every app.
        #expect(try await apps.run(Fixtures.clientB, "wipe").status == 0)
        #expect(try await apps.run(Fixtures.clientB, "accounts").output.contains("sees no account"))
    }

    @Test func eightProcessesRefreshingTheSameExpiredTokenMakeOneRequest() async throws {
        let apps = Apps(authority: try FakeAuthority())
        defer { try? FileManager.default.removeItem(atPath: apps.directory) }
        // A lifetime under MSAL's 300 s margin: the access token counts as expired at once.
        #expect(try await apps.run(Fixtures.clientA, "sign-in", ["--expires-in", "100"]).status == 0)
        try await apps.authority.control(["delay": 0.3, "expires_in": 3600])

        let results = try await withThrowingTaskGroup(of: (status: Int32, output: String).self) { tasks in
            for _ in 0..<8 { tasks.addTask { try await apps.run(Fixtures.clientA, "token") } }
            return try await tasks.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.output))")
        #expect(Set(results.map { Self.fingerprint($0.output) }).count == 1)
        #expect(results.filter { $0.output.contains("from the authority") }.count == 1)
        #expect(try await apps.authority.refreshRequests(Fixtures.clientA) == 1)

        // The stored refresh token is the rotated one: the authority (which revokes spent
        // tokens) accepts it.
        #expect(try await apps.run(Fixtures.clientA, "token", ["--force-refresh"]).status == 0)
    }
}
