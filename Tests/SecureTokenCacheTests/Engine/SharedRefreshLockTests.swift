import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

/// Processes of one user whose environments differ (a desktop session, a cron job, `sudo -u`, an
/// SSH login) share one group, and so one refresh lock: against an authority that rotates refresh
/// tokens, three processes asking at once for a scope not cached yet make one token request, and
/// all three get the token.
///
/// Real `stc-demo` processes against the fake authority; the keyring cases use the private Secret
/// Service that `scripts/test` starts (and fail without it).
@Suite(.tags(.multiProcess, .slow), .timeLimit(.minutes(5))) struct SharedRefreshLockTests {
    /// How the three processes of a round see the group.
    enum Setup: String, CaseIterable, CustomTestStringConvertible {
        /// `XDG_RUNTIME_DIR` set, unset, and set to another folder.
        case runtimeFolders
        /// No `--directory`: the default root, through `HOME` spelled as the real folder and as
        /// a symbolic link to it.
        case symlinkedHome
        /// A relative `--directory`, from one working directory.
        case relativeDirectory

        var testDescription: String { rawValue }
    }

    /// Rounds per case; two under a sanitizer (``Sanitizer``).
    static let rounds = Sanitizer.isActive ? 2 : 5

    /// One file or keyring group in fresh folders, and the environment each process gets.
    struct World {
        let authority: FakeAuthority
        let store: String
        let folder = TemporaryDirectory()
        let group = "com.example.shared-lock-\(UUID().uuidString.prefix(8).lowercased())"

        var home: String { folder.path + "/home" }
        var keyFile: String { folder.path + "/key" }

        init(store: String) throws {
            authority = try FakeAuthority()
            self.store = store
            for path in [home, folder.path + "/run-a", folder.path + "/run-b", folder.path + "/work"] {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
                chmod(path, 0o700)
            }
            try FileManager.default.createSymbolicLink(atPath: folder.path + "/home-link", withDestinationPath: home)
        }

        /// The arguments and environment of process `index` (0, 1, 2) of a round.
        func process(_ index: Int, _ setup: Setup) -> (arguments: [String], environment: [String: String], cwd: String?) {
            var environment = ProcessInfo.processInfo.environment
            var arguments = ["--group", group, "--store", store, "--key-file", keyFile]
            var cwd: String? = nil
            switch setup {
            case .runtimeFolders:
                arguments += ["--directory", folder.path + "/groups"]
                switch index {
                case 0: environment["XDG_RUNTIME_DIR"] = folder.path + "/run-a"
                case 1: environment["XDG_RUNTIME_DIR"] = nil
                default: environment["XDG_RUNTIME_DIR"] = folder.path + "/run-b"
                }
            case .symlinkedHome:
                environment["HOME"] = index == 1 ? folder.path + "/home-link" : home
                environment["XDG_DATA_HOME"] = nil
                environment["XDG_RUNTIME_DIR"] = folder.path + (index == 2 ? "/run-b" : "/run-a")
            case .relativeDirectory:
                arguments += ["--directory", "groups"]
                cwd = folder.path + "/work"
                environment["XDG_RUNTIME_DIR"] = index == 0 ? nil : folder.path + "/run-a"
            }
            return (arguments, environment, cwd)
        }

        func run(_ index: Int, _ setup: Setup, _ command: [String]) async throws -> (status: Int32, output: String) {
            let (arguments, environment, cwd) = process(index, setup)
            return try await SilentMultiProcessTests.launch(
                [command[0], "--authority", try authority.authority().url, "--client", Fixtures.clientA] + arguments
                    + command.dropFirst(),
                environment: environment, cwd: cwd)
        }
    }

    @Test(
        "one token request per round, every process served",
        arguments: [
            ("file", Setup.runtimeFolders), ("file", .symlinkedHome), ("file", .relativeDirectory),
            ("keyring", .runtimeFolders),
        ])
    func processesWithDifferentEnvironmentsShareOneRefresh(store: String, setup: Setup) async throws {
        let world = try World(store: store)
        let signIn = try await world.run(0, setup, ["sign-in"])
        #expect(signIn.status == 0, "\(signIn.output)")
        // Every process's refresh overlaps the others': the authority answers slowly.
        try await world.authority.control(["delay": 0.3, "expires_in": 3600])
        var requests = try await world.authority.refreshRequests(Fixtures.clientA)
        for round in 1...Self.rounds {
            let results = try await withThrowingTaskGroup(of: (status: Int32, output: String).self) { tasks in
                for index in 0..<3 {
                    tasks.addTask { try await world.run(index, setup, ["token", "--scope", "Round\(round).Read"]) }
                }
                return try await tasks.reduce(into: []) { $0.append($1) }
            }
            #expect(results.allSatisfy { $0.status == 0 }, "round \(round): \(results.map(\.output))")
            #expect(results.filter { $0.output.contains("from the authority") }.count == 1, "round \(round)")
            let now = try await world.authority.refreshRequests(Fixtures.clientA)
            #expect(now - requests == 1, "round \(round): \(now - requests) token requests")
            requests = now
        }
    }
}
