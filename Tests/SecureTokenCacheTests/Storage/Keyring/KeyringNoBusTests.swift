import Foundation
import Testing

@testable import SecureTokenCache

/// "No session bus": needs no keyring, so it runs everywhere.
@Suite(.timeLimit(.minutes(1))) struct KeyringNoBusTests {
    typealias Support = KeyringTestSupport

    @Test func aDeadBusAddressIsNoSessionBus() throws {
        let error = #expect(throws: TokenCacheError.self) {
            try KeyringClient.probe(busAddress: "unix:path=/nonexistent/stc-test-bus", timeout: .seconds(2))
        }
        #expect(error?.code == .noSessionBus)
        if case .gError(let domain, _, _)? = error?.underlying {
            #expect(domain == "g-io-error-quark")
        } else {
            Issue.record("the GError should be kept: \(String(describing: error))")
        }
    }

    @Test func aGarbageBusAddressIsNoSessionBus() throws {
        let error = #expect(throws: TokenCacheError.self) {
            try KeyringClient.probe(busAddress: "not-a-dbus-address", timeout: .seconds(2))
        }
        #expect(error?.code == .noSessionBus)
    }

    @Test(arguments: [nil, "unix:path=/nonexistent/stc-test-bus"] as [String?])
    func aProcessWithoutABusGetsNoSessionBus(_ address: String?) throws {
        let runtime = FileManager.default.temporaryDirectory.appendingPathComponent("stc-nobus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: runtime) }
        let started = ContinuousClock.now
        let output = try Support.helper(
            ["open", Support.uniqueGroup("nobus")],
            environment: Support.environment(["DBUS_SESSION_BUS_ADDRESS": address, "XDG_RUNTIME_DIR": runtime.path])
        )
        #expect(output.stdout == "error noSessionBus\n", "\(output.stderr)")
        #expect(output.status == 3)
        #expect(ContinuousClock.now - started < .seconds(10))
    }
}
