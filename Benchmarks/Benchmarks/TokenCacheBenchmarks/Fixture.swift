import SecureTokenCache
import Synchronization

/// A prepared group per workload size, built once per benchmark process: importing 100,000
/// tokens is setup, not what is measured.
final class Fixture: Sendable {
    let group: CacheGroup
    /// Client A's cache (in the family, many accounts).
    let cache: TokenCache
    /// A client signed into exactly one account.
    let soloClient: TokenCache
    /// An account in the middle of the workload.
    let account: Account

    private static let prepared = Mutex<[Int: Fixture]>([:])

    private init(workload: Workload) throws {
        (group, cache) = try workload.open()
        account = try workload.probeAccount(cache)
        soloClient = try workload.signIn(clientId: "33333333-aaaa-4bbb-8ccc-000000000003", group: group)
    }

    /// The in-memory fixture of `size` access tokens.
    static func memory(_ size: Int) throws -> Fixture {
        if let fixture = prepared.withLock({ $0[size] }) { return fixture }
        let fixture = try Fixture(workload: Workload(accessTokens: size))
        prepared.withLock { $0[size] = fixture }
        return fixture
    }
}
