import BenchmarkWorkload
import Glibc
import SecureTokenCache
import Synchronization

/// A prepared group per store kind and workload size, built once per benchmark process:
/// importing 100,000 tokens is setup, not what is measured.
final class Fixture: Sendable {
    let kind: BenchmarkStore
    let workload: Workload
    /// The group's name and the private folder its files (if any) live in.
    let name: String
    let root: String
    let group: CacheGroup
    /// Client A's cache (in the family, many accounts).
    let cache: TokenCache
    /// A client signed into exactly one account.
    let soloClient: TokenCache
    /// An account in the middle of the workload.
    let account: Account

    private let peerCache = Mutex<TokenCache?>(nil)
    private let writes = Mutex(0)

    private static let prepared = Mutex<[String: Fixture]>([:])

    private init(kind: BenchmarkStore, workload: Workload) throws {
        self.kind = kind
        self.workload = workload
        name = "stc-bench-\(kind.rawValue.lowercased())-\(workload.accessTokens)-\(getpid())"
        // The memory store writes nothing; the harness may end a benchmark process without
        // running atexit handlers, so don't leave an empty folder behind per benchmark.
        let root = kind == .memory ? "" : try makeScratchFolder()
        self.root = root
        if !root.isEmpty { scratchFolders.withLock { $0.append(root) } }
        (group, cache) = try workload.open(kind.open(name, root: root))
        account = try workload.probeAccount(cache)
        soloClient = try workload.signIn(clientId: Workload.soloClient, group: group)
    }

    /// The fixture of `size` access tokens in a `kind` store.
    static func get(_ kind: BenchmarkStore, _ size: Int) throws -> Fixture {
        let key = "\(kind.rawValue).\(size)"
        if let fixture = prepared.withLock({ $0[key] }) { return fixture }
        let fixture = try Fixture(kind: kind, workload: Workload(accessTokens: size))
        prepared.withLock { $0[key] = fixture }
        return fixture
    }

    /// Forgets every fixture and removes their folders (a later `get` builds afresh).
    static func discardAll() {
        prepared.withLock { $0.removeAll() }
        for folder in scratchFolders.withLock({ folders in
            defer { folders.removeAll() }; return folders
        }) {
            removeScratchFolder(folder)
        }
    }

    /// A second view of the same group, as another process opening it would have (shared
    /// stores only).
    func reopen() throws -> CacheGroup { try kind.open(name, root: root) }

    /// Counts a write of a benchmark and returns how many came before it (to alternate
    /// responses, so that every write changes the cache).
    func nextWrite() -> Int {
        writes.withLock { count in
            defer { count += 1 }
            return count
        }
    }

    /// Client A's cache over a second view of the group (made once): the "other process".
    func peer() throws -> TokenCache {
        try peerCache.withLock { peer in
            if let peer { return peer }
            let made = try TokenCache(clientId: Workload.clientA, group: reopen())
            peer = made
            return made
        }
    }
}

/// Scratch folders to remove when the benchmark process exits.
let scratchFolders = Mutex<[String]>([])

func removeScratchFoldersAtExit() {
    atexit {
        for folder in scratchFolders.withLock({ $0 }) { removeScratchFolder(folder) }
    }
}

/// A token endpoint that fails every call: a benchmark of cached hits must never reach it.
struct NoNetwork: TokenEndpointClient {
    func redeem(
        refreshToken: String, clientId: String, scopes: Scopes, endpoint: String, timeout: Duration
    ) async throws -> TokenResponse {
        throw TokenCacheError(.network, "the benchmark made a network call")
    }
}
