import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

/// Single flight across real processes: four `stc-testhelper` processes of sixteen tasks each,
/// over one file-store group, ask at once for one app token of the fake authority.
@Suite(.tags(.multiProcess), .timeLimit(.minutes(2))) struct ConfidentialClientProcessTests {
    static let daemon = AppTokenTests.daemon

    /// Runs `processes` helpers of `tasks` tasks each at once on `group`; the lines they print.
    static func stampede(root: String, group: String, authority: String, processes: Int = 4, tasks: Int = 16) throws -> [String] {
        let helpers = try (0..<processes).map { _ in
            try Helper(["app-stampede", root, group, authority, daemon, String(tasks)])
        }
        return helpers.flatMap { $0.finish() }
    }

    /// The token fingerprints the lines name (an error line names none).
    static func fingerprints(_ lines: [String]) -> Set<String> {
        Set(lines.map { line in line.hasPrefix("token ") ? String(line.split(separator: " ")[1]) : line })
    }

    @Test func sixtyFourTasksInFourProcessesMakeOneTokenRequest() async throws {
        let tmp = TemporaryDirectory()
        let authority = try FakeAuthority()
        let url = "\(authority.base)/\(Fixtures.tenant)"
        let requests = { try await authority.stats()["\(Self.daemon) client_credentials"] ?? 0 }

        // An empty cache: one request among 64 callers, whose token every one of them gets.
        let fresh = try Self.stampede(root: tmp.path, group: "fresh", authority: url)
        #expect(fresh.count == 64, "\(fresh)")
        #expect(Self.fingerprints(fresh).count == 1, "\(fresh)")
        #expect(try await requests() == 1)

        // An expired token (stored within 300 s of its expiry): again one request among 64.
        try await authority.control(["expires_in": 200])
        let stale = try Self.stampede(root: tmp.path, group: "expired", authority: url, processes: 1, tasks: 1)
        #expect(stale.count == 1 && stale[0].hasSuffix("authority"), "\(stale)")
        #expect(try await requests() == 2)
        try await authority.control([:])
        let renewed = try Self.stampede(root: tmp.path, group: "expired", authority: url)
        #expect(renewed.count == 64, "\(renewed)")
        #expect(Self.fingerprints(renewed).count == 1, "\(renewed)")
        #expect(!Self.fingerprints(renewed).contains(String(stale[0].split(separator: " ")[1])))
        #expect(try await requests() == 3)
    }
}
