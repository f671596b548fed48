import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SecureTokenCache

/// Runs the interop scripts of `Tests/Support` with real msal-python 1.39.0.
///
/// The interpreter comes from `STC_PYTHON` (set by `scripts/test` and `.ci/run`); without it the
/// tests run `scripts/python-env`, which creates `.venv` with msal==1.39.0 (and likewise
/// `STC_PYTHON_PORTALOCKER` and `.venv-portalocker` for the shared-cache peers). There is no skip: a
/// missing interpreter or msal fails the tests (in CI, `CI=true`, and locally alike), with a
/// message that says how to fix it.
enum MSALPython {
    static let repositoryRoot = PackageRoot.url
    static let supportDirectory = repositoryRoot.appendingPathComponent("Tests/Support")

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The Python interpreter with msal-python 1.39.0 and msal-extensions 1.3.1; with
    /// `portalocker`, the one that also has portalocker (`STC_PYTHON_PORTALOCKER`, else
    /// `scripts/python-env --portalocker`), where msal-extensions locks with flock.
    static func interpreter(portalocker: Bool = false) throws -> String {
        let variable = portalocker ? "STC_PYTHON_PORTALOCKER" : "STC_PYTHON"
        if let path = ProcessInfo.processInfo.environment[variable], !path.isEmpty { return path }
        let output = try run(
            repositoryRoot.appendingPathComponent("scripts/python-env").path, portalocker ? ["--portalocker"] : [])
        guard let path = output.split(separator: "\n").last.map(String.init), FileManager.default.isExecutableFile(atPath: path)
        else {
            throw Failure(description: "scripts/python-env printed no interpreter path")
        }
        return path
    }

    /// How long one script run may take (a first `scripts/python-env` installs from PyPI).
    static let timeoutSeconds = 300

    /// Runs a program; returns its standard output. Throws with its standard error when it fails.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = supportDirectory
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("stc-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let out = scratch.appendingPathComponent("stdout")
        let err = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        // A hung interpreter must fail the run, not hang it.
        let timedOut = Atomic<Bool>(false)
        let watchdog = DispatchWorkItem {
            if process.isRunning {
                timedOut.store(true, ordering: .relaxed)
                // SIGKILL: the interpreter inherits the test runner's blocked SIGTERM (the wait
                // for it is the caller's, below).
                kill(process.processIdentifier, SIGKILL)
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(timeoutSeconds), execute: watchdog)
        process.waitUntilExit()
        watchdog.cancel()
        if timedOut.load(ordering: .relaxed) {
            throw Failure(description: "\(executable) \(arguments.joined(separator: " ")) ran longer than \(timeoutSeconds) s")
        }
        let stdout = String(decoding: try Data(contentsOf: out), as: UTF8.self)
        guard process.terminationStatus == 0 else {
            let stderr = String(decoding: try Data(contentsOf: err), as: UTF8.self)
            throw Failure(
                description: """
                    \(URL(fileURLWithPath: executable).lastPathComponent) \(arguments.joined(separator: " ")) exited with \
                    \(process.terminationStatus). Run scripts/python-env (needs PyPI) or set STC_PYTHON to a Python \
                    with msal==1.39.0.
                    \(stderr.suffix(4000))
                    """)
        }
        return stdout
    }

    // MARK: - What msal-python built

    /// One lookup msal-python answered, and what the engine must answer.
    struct Lookup: Codable, Sendable {
        struct MSALAnswer: Codable, Sendable {
            var secret: String?
            var network_calls: Int
            var usernames: [String]?
            var no_account: Bool?
            /// For `refresh` lookups: the refresh tokens msal-python sent, in order.
            var sent_refresh_tokens: [String]?
        }

        /// Where our rules (cache-model.md) make the engine answer differently, and why.
        struct EngineAnswer: Codable, Sendable {
            var secret: String?
            var usernames: [String]?
            var rule: String
        }

        var id: String
        var kind: String
        var client_id: String
        var authority: String
        var scopes: [String]?
        var username: String?
        var data: [String: String]?
        var fmi_path: String?
        var ext_cache_key: String?
        var msal: MSALAnswer?
        var engine: EngineAnswer?

        /// The secret the engine must return.
        var expectedSecret: String? { engine.map(\.secret) ?? msal?.secret }
        /// The usernames the engine must list.
        var expectedUsernames: [String]? { engine?.usernames ?? msal?.usernames }
    }

    struct Cache: Sendable {
        var name: String
        /// Exactly what msal-python's `serialize()` returned.
        var serialized: [UInt8]
        var lookups: [Lookup]
        /// The `TokenCache.add` events (with their clock) the cache was built from; `nil` for flows.
        var events: [JSONObject]?
        /// The clock msal-python's answers were given at, for the shared vectors of 2023
        /// (`nil`: the real time of the build, `Built.now`).
        var frozenNow: Int64?

        func bytes() throws -> [UInt8] { serialized }
    }

    /// A JSON text and what msal-python's `json.dumps(json.loads(text), indent=4)` makes of it.
    struct RoundTrip: Decodable, Sendable {
        var input: String
        var output: String
    }

    struct Built: Sendable {
        /// The clock for lookups of `cache`.
        func now(_ cache: Cache) -> Int64 { cache.frozenNow ?? now }

        var now: Int64
        var caches: [Cache]
        var jsonRoundTrips: [RoundTrip]

        func cache(_ name: String) throws -> Cache {
            guard let cache = caches.first(where: { $0.name == name }) else { throw Failure(description: "no cache \(name)") }
            return cache
        }
    }

    static let cacheNames = ["add_users", "add_adfs", "add_app_only", "flows"] + Fixtures.vectorNames

    /// One Python run builds every cache, shared by all tests.
    private static let builtOnce: Result<Built, Failure> = {
        do {
            return .success(try build())
        } catch let failure as Failure {
            return .failure(failure)
        } catch {
            return .failure(Failure(description: "\(error)"))
        }
    }()

    static func built() throws -> Built { try builtOnce.get() }

    private static func build() throws -> Built {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stc-msal-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try run(try interpreter(), ["msal_interop.py", "build", directory.path])
        let expectationsURL = directory.appendingPathComponent("expectations.json")
        let data = try Data(contentsOf: expectationsURL)
        struct File: Decodable {
            struct Entry: Decodable {
                var name: String
                var path: String
                var lookups: [Lookup]
                var frozen_now: Int64?
            }
            var now: Int64
            var caches: [Entry]
            var json_round_trips: [RoundTrip]
        }
        let file = try JSONDecoder().decode(File.self, from: data)
        // The events hold token responses of any shape: read them with the engine's own parser.
        guard case .object(let document) = try JSONParser.parse(Array(data)), case .array(let entries)? = document["caches"]
        else {
            throw Failure(description: "expectations.json has no caches")
        }
        var events: [String: [JSONObject]] = [:]
        for case .object(let entry) in entries {
            guard case .string(let name)? = entry["name"], case .array(let list)? = entry["events"] else { continue }
            events[name] = list.compactMap { if case .object(let event) = $0 { event } else { nil } }
        }
        return Built(
            now: file.now,
            caches: try file.caches.map {
                Cache(
                    name: $0.name, serialized: Array(try Data(contentsOf: URL(fileURLWithPath: $0.path))), lookups: $0.lookups,
                    events: events[$0.name], frozenNow: $0.frozen_now)
            }, jsonRoundTrips: file.json_round_trips)
    }

    // MARK: - msal-python reading the engine's export

    struct ConsumeEntry: Encodable {
        var name: String
        var path: String
        var lookups: [Lookup]
        var frozen_now: Int64?
    }

    /// Has msal-python deserialize each file and run the lookups with no network.
    struct Consumed: Decodable {
        /// Per cache and lookup id, what msal-python answered.
        var results: [String: [String: Lookup.MSALAnswer]]
        /// Per cache, whether msal-python's `serialize()` after `deserialize()` gave back the same text.
        var reserialized_identical: [String: Bool]
    }

    static func consume(_ entries: [ConsumeEntry]) throws -> Consumed {
        let spec = FileManager.default.temporaryDirectory.appendingPathComponent("stc-consume-\(UUID().uuidString).json")
        try JSONEncoder().encode(["caches": entries]).write(to: spec)
        defer { try? FileManager.default.removeItem(at: spec) }
        let output = try run(try interpreter(), ["msal_interop.py", "consume", spec.path])
        return try JSONDecoder().decode(Consumed.self, from: Data(output.utf8))
    }
}

extension MSALPython.Lookup {
    /// What the engine answers for this lookup in `group`.
    func engineAnswer(in group: CacheGroup, now: Int64) throws -> (secret: String?, usernames: [String]?) {
        let cache = try TokenCache(clientId: client_id, group: group)
        let authority = try Authority(authority)
        switch kind {
        case "accounts":
            return (nil, try cache.accounts().map(\.username).sorted())
        case "client" where ext_cache_key == nil:
            return (try cache.appToken(for: Scopes(scopes ?? []), authority: authority)?.token.secret, nil)
        case "client":
            // An extended cache key (fmi_path) has no API yet: ask the index for the bucket
            // msal-python's query names (client, cloud, tenant, ext_cache_key).
            let bucket = AccessTokenBucket(
                account: "", environment: authority.environment.group, realm: authority.tenant, client: client_id.lowercased(),
                tokenType: "bearer", extCacheKey: ext_cache_key ?? "")
            return (try group.index().accessToken(in: bucket, scopes: Scopes(scopes ?? []), now: now)?.secret, nil)
        default:
            guard let username, let account = try cache.account(username: username) else { return (nil, nil) }
            let tokenType = data?["token_type"] ?? "Bearer"
            return (
                try cache.accessToken(for: Scopes(scopes ?? []), account: account, authority: authority, tokenType: tokenType)?
                    .token.secret, nil
            )
        }
    }
}
