import Foundation
import Logging
import Synchronization
import Testing

@testable import SecureTokenCache

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One in-memory group on a test clock, and a cache per client id: apps A and B of one family,
/// C outside it.
final class SilentWorld: Sendable {
    let clock = TestClock()
    let group: CacheGroup
    let a: TokenCache
    let b: TokenCache
    let c: TokenCache

    init(logger: Logger = .discarding) throws {
        let clock = self.clock
        // A name per test: the in-process refresh lock is keyed by group name, and tests of one
        // account must not wait for each other's refreshes.
        let name = "silent-test-\(UUID().uuidString.prefix(8).lowercased())"
        group = try CacheGroup(name: name, store: MemoryStore(name: name), clock: { clock.now }, logger: logger)
        a = try TokenCache(clientId: Fixtures.clientA, group: group)
        b = try TokenCache(clientId: Fixtures.clientB, group: group)
        c = try TokenCache(clientId: Fixtures.clientC, group: group)
    }

    /// Another app instance of `clientId` over the same group.
    func cache(_ clientId: String) throws -> TokenCache { try TokenCache(clientId: clientId, group: group) }

    /// The error `body` throws, as a `TokenCacheError`.
    static func error(_ body: () async throws -> AuthenticationResult) async -> TokenCacheError? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error as? TokenCacheError
        }
    }
}
