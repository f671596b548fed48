import Foundation
import Testing

@testable import SecureTokenCache

extension KeyringTests {
    /// The libsecret binding against the real daemon.
    @Suite struct Binding {
        let client = KeyringClient()

        @Test func storeLookupClearRoundTrip() throws {
            let attributes = ["group": KeyringTestSupport.uniqueGroup("binding"), "role": "key"]
            let secret = (0..<32).map { UInt8($0 * 7 % 251) }
            try secret.withUnsafeBytes { try client.store($0, label: "SecureTokenCache test item", attributes: attributes) }
            #expect(try client.withSecret(attributes: attributes) { Array($0) } == secret)
            #expect(try client.count(matching: ["group": attributes["group"]!]) == 1)
            // Storing again replaces the item instead of adding one.
            let second = [UInt8](repeating: 9, count: 40)
            try second.withUnsafeBytes { try client.store($0, label: "SecureTokenCache test item", attributes: attributes) }
            #expect(try client.withSecret(attributes: attributes) { Array($0) } == second)
            #expect(try client.count(matching: ["group": attributes["group"]!]) == 1)
            #expect(try client.clear(attributes: attributes))
            #expect(try client.withSecret(attributes: attributes) { $0.count } == nil)
            #expect(try client.clear(attributes: attributes) == false)
        }

        @Test func lookupOfAMissingItemIsNil() throws {
            let attributes = ["group": KeyringTestSupport.uniqueGroup("missing"), "role": "records"]
            #expect(try client.withSecret(attributes: attributes) { $0.count } == nil)
        }

        /// libsecret would print a CRITICAL and answer FALSE/NULL without a GError for these.
        @Test(arguments: [
            ["group": "g", "role": "key", "user": "alice"],
            ["group": "g"],
            ["group": "g", "role": ""],
            ["group": "g\u{0}x", "role": "key"],
            ["xdg:schema": "org.securetokencache.Group", "group": "g", "role": "key"],
        ])
        func attributesOutsideTheSchemaAreRejected(_ attributes: [String: String]) throws {
            let error = #expect(throws: TokenCacheError.self) {
                try [UInt8(1)].withUnsafeBytes { try client.store($0, label: "x", attributes: attributes) }
            }
            #expect(error?.code == .invalidArgument)
            let lookupError = #expect(throws: TokenCacheError.self) {
                try client.withSecret(attributes: attributes) { $0.count }
            }
            #expect(lookupError?.code == .invalidArgument)
        }

        @Test func concurrentRoundTrips() async throws {
            let group = KeyringTestSupport.uniqueGroup("concurrent")
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                for i in 0..<8 {
                    tasks.addTask {
                        let client = KeyringClient()
                        let attributes = ["group": "\(group)-\(i)", "role": "key"]
                        let payload = [UInt8](repeating: UInt8(i), count: 32)
                        try payload.withUnsafeBytes { try client.store($0, label: "c", attributes: attributes) }
                        #expect(try client.withSecret(attributes: attributes) { Array($0) } == payload)
                        #expect(try client.clear(attributes: attributes))
                    }
                }
                try await tasks.waitForAll()
            }
        }
    }
}
