// PeerCompare: times this engine on the synthetic workload, outside the benchmark harness, the
// way scripts/compare_peers.py times msal-python and msal-extensions (monotonic-clock loops,
// median of several repeats), and prints the medians as JSON.
//
//   PeerCompare emit TOKENS PATH          write the workload (as the engine exports it, with the
//                                         solo client's sign-in) as MSAL JSON for msal-python
//   PeerCompare run SIZES [REPEATS]       time every operation at each size (comma-separated);
//                                         prints {"<store>.<op>.<size>": {"ns": median, ...}}
//   PeerCompare serve-open TOKENS         for compare_peers.py: opens a file group of TOKENS once per
//                                         line read and prints the nanoseconds each open and free took
//   PeerCompare serve-read-after-write STORE TOKENS
//                                         for compare_peers.py: per line read (a count), that many
//                                         writes to a STORE group by another process (PeerCompare
//                                         serve-writer), each followed by a timed first lookup
//                                         here; prints the nanoseconds
//   PeerCompare scale-point PATH TOKENS   one point of the scaling curves (ScaleCurve.swift): the
//                                         import of the MSAL JSON at PATH, resident memory, hit,
//                                         miss, accounts, export and a file group's open
//   PeerCompare scale-hold PATH TOKENS    imports the MSAL JSON at PATH into a memory group and
//                                         exits holding it, for heap profilers (ScaleCurve.swift)
//   PeerCompare app-hit PATH TOKENS CLIENT TENANT SCOPE [REPEATS]
//                                         imports the MSAL JSON at PATH (a tenant's app tokens, as
//                                         compare_peers.py writes them) into a memory group and
//                                         times a hit of CLIENT's app token for SCOPE: the lookup
//                                         (appToken) and the acquisition (ConfidentialClient)
//   PeerCompare obo-hit USERS [REPEATS]   times an on-behalf-of hit in a web API's memory group with
//                                         one caller's token per user (ServerCache.swift)
//   PeerCompare sign-in USERS [REPEATS]   times a sign-in, of a new user and of a returning one, in a
//                                         web app's memory group that USERS users signed into
//                                         (FleetCache.swift)
//   PeerCompare bounded-obo ASSERTIONS LIMIT-MB
//                                         stores a token for each of ASSERTIONS callers in a group
//                                         bounded to LIMIT-MB; records resident memory against it
//   PeerCompare fleet-fill KEY-FILE USERS
//                                         puts USERS users into a fleet's group in the PostgreSQL
//                                         database STC_POSTGRES_URL names, sealed with the key in
//                                         KEY-FILE, unless they are there (FleetCache.swift)
//   PeerCompare fleet KEY-FILE USERS [REPEATS]
//                                         an instance of that group with a 64 MB first level: times
//                                         an L1 hit, an L2 cold read beside a bare prepared SELECT,
//                                         a write, and lookups per second
//   PeerCompare fleet-bounded KEY-FILE USERS LIMIT-MB
//                                         looks up each of the group's USERS users once with a
//                                         LIMIT-MB first level; records resident memory against it
//   PeerCompare fleet-spin KEY-FILE USERS OP N
//                                         for profilers: OP (hit or cold) N times in that group
//   PeerCompare spin OP TOKENS N          run one operation N times (for callgrind / perf); OP is
//                                         hit, accounts, write, signOut, serialize, deserialize
//                                         (memory group), open or catchUp (file group); open prints each
//                                         open's and free's milliseconds on stderr, catchUp the
//                                         median time of the first lookup after each write
//
// Build: swift build -c release --package-path Benchmarks --product PeerCompare
import BenchmarkWorkload
import Foundation
import Glibc
import SecureTokenCache

/// Nanoseconds on the monotonic clock.
func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Keeps the optimiser from dropping a result.
@inline(never) func consume<T>(_ value: T) { withExtendedLifetime(value) {} }

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

struct Measurement {
    var ns: Double
    var samples: Int
    var note: String?
}

nonisolated(unsafe) var results: [(String, Measurement)] = []

/// Times `body` in loops of `iterations`, `repeats` times; records the median per-call time.
func loop(_ name: String, iterations: Int, repeats: Int, _ body: () throws -> Void) rethrows {
    for _ in 0..<max(1, iterations / 10) { try body() }  // warm-up
    var perCall: [Double] = []
    for _ in 0..<repeats {
        let start = now()
        for _ in 0..<iterations { try body() }
        perCall.append(Double(now() - start) / Double(iterations))
    }
    results.append((name, Measurement(ns: median(perCall), samples: repeats)))
}

/// ``loop(_:iterations:repeats:_:)`` for an async body (the silent-acquisition API).
func loop(_ name: String, iterations: Int, repeats: Int, _ body: () async throws -> Void) async rethrows {
    for _ in 0..<max(1, iterations / 10) { try await body() }  // warm-up
    var perCall: [Double] = []
    for _ in 0..<repeats {
        let start = now()
        for _ in 0..<iterations { try await body() }
        perCall.append(Double(now() - start) / Double(iterations))
    }
    results.append((name, Measurement(ns: median(perCall), samples: repeats)))
}

/// A token endpoint that fails every call: the silent hit must never reach the network.
struct NoNetwork: TokenEndpointClient {
    func redeem(refreshToken: String, clientId: String, scopes: Scopes, endpoint: String, timeout: Duration) async throws
        -> TokenResponse
    {
        throw TokenCacheError(.network, "PeerCompare made a network call")
    }
}

/// Times single calls that each need untimed setup; records the median.
func calls(_ name: String, count: Int, setup: () throws -> Void, _ body: () throws -> Void) rethrows {
    var times: [Double] = []
    for _ in 0..<count {
        try setup()
        let start = now()
        try body()
        times.append(Double(now() - start))
    }
    results.append((name, Measurement(ns: median(times), samples: count)))
}

/// Client A's cache, the solo client's cache and the probe account over a fresh `kind` group.
struct Prepared {
    let group: CacheGroup
    let cache: TokenCache
    let solo: TokenCache
    let account: Account
    let root: String
    let name: String
}

func prepare(_ kind: BenchmarkStore, _ workload: Workload) throws -> Prepared {
    let root = try makeScratchFolder()
    let name = "stc-compare-\(kind.rawValue.lowercased())-\(workload.accessTokens)"
    let (group, cache) = try workload.open(kind.open(name, root: root))
    let solo = try workload.signIn(clientId: Workload.soloClient, group: group)
    return Prepared(group: group, cache: cache, solo: solo, account: try workload.probeAccount(cache), root: root, name: name)
}

/// Another process writing to a group (`PeerCompare serve-writer`), driven over its standard
/// input and output: what "another process wrote" means in issue 7's first-read targets.
final class WriterProcess {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()

    init(kind: BenchmarkStore, tokens: Int, name: String, root: String) throws {
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["serve-writer", kind.rawValue, String(tokens), name, root]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        try expect("ready")
    }

    /// Has the other process store the refresh numbered `serial`; returns once it is committed.
    func write(serial: Int) throws {
        input.fileHandleForWriting.write(Data("\(serial)\n".utf8))
        try expect("done")
    }

    func close() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    private func expect(_ word: String) throws {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        let fd = output.fileHandleForReading.fileDescriptor
        while Glibc.read(fd, &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
        let answer = String(decoding: line, as: UTF8.self)
        guard answer == word else { throw TokenCacheError(.ioFailure, "PeerCompare serve-writer answered \"\(answer)\"") }
    }
}

/// With `STC_SPIN_EVICT_MB=N` (spin catchUp), writes one byte per cache line of an N MiB buffer,
/// so that the read after it finds its code and data out of the caches, as a reader that slept
/// through another process's keyring write does (64 is enough on this machine); else nothing.
func evictCaches() {
    guard let buffer = evictionBuffer else { return }
    for offset in stride(from: 0, to: buffer.count, by: 64) { buffer[offset] &+= 1 }
}

/// The buffer `evictCaches` writes through, made on first use if `STC_SPIN_EVICT_MB` asks for one.
nonisolated(unsafe) private let evictionBuffer: UnsafeMutableBufferPointer<UInt8>? = {
    guard let text = getenv("STC_SPIN_EVICT_MB"), let mib = Int(String(cString: text)), mib > 0 else { return nil }
    return .allocate(capacity: mib << 20)
}()

/// Iterations per timed loop for an operation of roughly `estimateNs`, to fill about 20 ms.
func iterations(_ estimateNs: Double) -> Int { max(10, Int(20_000_000 / estimateNs)) }

func measure(kind: BenchmarkStore, size: Int, repeats: Int) async throws {
    let workload = Workload(accessTokens: size)
    let prepared = try prepare(kind, workload)
    defer { removeScratchFolder(prepared.root) }
    let (cache, account) = (prepared.cache, prepared.account)
    let label = "\(kind.rawValue.lowercased())"
    let authority = Workload.authority
    let response = try Workload.response(user: workload.probeUser)
    let request = Workload.request()
    // An app holds the scopes it asks for, as the peers' loops hold theirs.
    let (hitScopes, missScopes) = (Workload.hitScopes, Workload.missScopes)

    // Lookups: the public API's hit (what acquireTokenSilently will answer from; see the
    // marked spot in TokenCacheBenchmarks.swift), miss, listing, account by name, refresh token.
    try loop("\(label).hit.\(size)", iterations: iterations(300), repeats: repeats) {
        consume(try cache.accessToken(for: hitScopes, account: account, authority: authority))
    }
    // The public silent-acquisition API on the same cached token (issue 7's headline figure).
    let noNetwork = NoNetwork()
    try await loop("\(label).silentHit.\(size)", iterations: iterations(300), repeats: repeats) {
        consume(
            try await cache.acquireTokenSilently(
                scopes: hitScopes, account: account, authority: authority, endpoint: noNetwork))
    }
    try loop("\(label).miss.\(size)", iterations: iterations(300), repeats: repeats) {
        consume(try cache.accessToken(for: missScopes, account: account, authority: authority))
    }
    try loop("\(label).accountsSolo.\(size)", iterations: iterations(500), repeats: repeats) {
        consume(try prepared.solo.accounts())
    }
    try loop("\(label).accountsAll.\(size)", iterations: iterations(Double(max(size, 10)) * 100), repeats: repeats) {
        consume(try cache.accounts())
    }
    try loop("\(label).freshHit.\(size)", iterations: iterations(300), repeats: repeats) {
        consume(prepared.group.generation)
        consume(try cache.accessToken(for: hitScopes, account: account, authority: authority))
    }

    // Writes. Durable stores get fewer calls: each is an fsync or a D-Bus round trip. Two
    // refreshes alternate, so that every write changes the cache.
    let writes = kind == .memory ? 2_000 : 50
    let refreshes = try Workload.alternatingRefreshes(user: workload.probeUser)
    var written = 0
    try calls("\(label).write.\(size)", count: writes, setup: { written += 1 }) {
        consume(try cache.store(refreshes[written % 2], for: request, signIn: false))
    }
    try calls("\(label).signOut.\(size)", count: writes, setup: { try cache.store(response, for: request, signIn: true) }) {
        try cache.signOut(account)
    }

    // Another process's write, then the first lookup here. More samples for the file store,
    // whose writes are quick: its median is an issue-7 target, and one busy moment of this
    // shared machine should not decide it.
    if kind.isShared {
        let writes = kind == .file ? 200 : writes
        let peer = try TokenCache(clientId: Workload.clientA, group: kind.open(prepared.name, root: prepared.root))
        var serial = 0
        try calls(
            "\(label).readAfterOtherWrite.\(size)", count: writes,
            setup: {
                serial += 1
                try peer.store(try Workload.response(user: workload.probeUser, serial: serial), for: request, signIn: false)
            }
        ) {
            consume(try cache.accessToken(for: hitScopes, account: account, authority: authority))
        }
    }

    // The whole cache: export (msal-python's serialize) and open / import (its deserialize).
    let exportRepeats = size >= 10_000 ? 5 : 20
    try loop("\(label).serialize.\(size)", iterations: 1, repeats: exportRepeats) {
        consume(try prepared.group.exportMSAL(includeSecrets: true))
    }
    if kind == .memory {
        let json = try prepared.group.exportMSAL(includeSecrets: true)
        try loop("\(label).deserialize.\(size)", iterations: 1, repeats: exportRepeats) {
            consume(try CacheGroup(inMemory: "stc-compare-import").importMSAL(json))
        }
    } else {
        // The open is the figure issue 7 gates at 10,000 tokens: more samples, so one busy
        // moment of this shared machine does not decide its median.
        try loop("\(label).open.\(size)", iterations: 1, repeats: size >= 10_000 ? 15 : exportRepeats) {
            consume(try kind.open(prepared.name, root: prepared.root).generation)
        }
    }
}

func printJSON() {
    var lines: [String] = []
    for (name, measurement) in results {
        var fields = #""ns": \#(measurement.ns), "samples": \#(measurement.samples)"#
        if let note = measurement.note { fields += #", "note": "\#(note.filter { $0 != "\"" && $0 != "\\" })""# }
        lines.append(#"  "\#(name)": {\#(fields)}"#)
    }
    print("{\n" + lines.joined(separator: ",\n") + "\n}")
}

let arguments = CommandLine.arguments
switch arguments.count > 1 ? arguments[1] : "" {
case "emit" where arguments.count == 4:
    let workload = Workload(accessTokens: Int(arguments[2])!)
    let (group, _) = try workload.open()
    _ = try workload.signIn(clientId: Workload.soloClient, group: group)
    let json = try group.exportMSAL(includeSecrets: true)
    guard let file = fopen(arguments[3], "w") else { fatalError("cannot write \(arguments[3])") }
    _ = json.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    fclose(file)
case "run" where arguments.count >= 3:
    let sizes = arguments[2].split(separator: ",").compactMap { Int($0) }
    let repeats = arguments.count > 3 ? Int(arguments[3])! : 7
    for kind in BenchmarkStore.allCases {
        if let reason = kind.unavailability {
            FileHandle.standardError.write(Data(("PeerCompare: \(kind.rawValue) store skipped: \(reason)\n").utf8))
            results.append(("\(kind.rawValue.lowercased()).unavailable", Measurement(ns: 0, samples: 0, note: reason)))
            continue
        }
        // A document the extensions share is compared with them at their sizes only (a Secret
        // Service holding a 15 MB item rewritten a hundred times is another benchmark), and the
        // keyring store up to the sizes a desktop's keyring holds: at 100k tokens, the session's
        // bus closed the connection that sent gnome-keyring the group's item.
        for size in sizes where (!kind.isSharedDocument || size <= 1_000) && (kind != .keyring || size <= 10_000) {
            try await measure(kind: kind, size: size, repeats: repeats)
        }
    }
    printJSON()
case "scale-point" where arguments.count == 4:
    try await measureScalePoint(path: arguments[2], tokens: Int(arguments[3])!)
    printJSON()
case "scale-hold" where arguments.count == 4:
    try holdScalePoint(path: arguments[2], tokens: Int(arguments[3])!)
case "app-hit" where arguments.count >= 7:
    try await measureAppHit(
        path: arguments[2], tokens: Int(arguments[3])!, client: arguments[4], tenant: arguments[5], scope: arguments[6],
        repeats: arguments.count > 7 ? Int(arguments[7])! : 7)
    printJSON()
case "obo-hit" where arguments.count >= 3:
    try await measureOnBehalfOfHit(users: Int(arguments[2])!, repeats: arguments.count > 3 ? Int(arguments[3])! : 7)
    printJSON()
case "sign-in" where arguments.count >= 3:
    try measureSignIn(users: Int(arguments[2])!, repeats: arguments.count > 3 ? Int(arguments[3])! : 7)
    printJSON()
case "bounded-obo" where arguments.count == 4:
    try measureBoundedOnBehalfOf(assertions: Int(arguments[2])!, limitMB: Int(arguments[3])!)
    printJSON()
case "fleet-fill" where arguments.count == 4:
    try await fillFleet(users: Int(arguments[3])!, keyFile: arguments[2])
    printJSON()
case "fleet" where arguments.count >= 4:
    try await measureFleet(
        users: Int(arguments[3])!, keyFile: arguments[2], repeats: arguments.count > 4 ? Int(arguments[4])! : 7)
    printJSON()
case "fleet-bounded" where arguments.count == 5:
    try measureBoundedFleet(users: Int(arguments[3])!, keyFile: arguments[2], limitMB: Int(arguments[4])!)
    printJSON()
case "fleet-spin" where arguments.count == 6:
    // On the main actor, as `spin` runs: valgrind 3.19 stops with an internal error when the
    // cooperative pool's threads wait for the database.
    try spinFleet(users: Int(arguments[3])!, keyFile: arguments[2], operation: arguments[4], count: Int(arguments[5])!)
case "serve-open" where arguments.count == 3:
    // For scripts/compare_peers.py, which alternates the engine's open with msal-python's
    // deserialize sample by sample, so that both sides see the same moments of a shared machine:
    // prepares a file group of TOKENS, prints "ready", then for each line read opens and frees
    // the group once and prints the nanoseconds that took.
    let workload = Workload(accessTokens: Int(arguments[2])!)
    let prepared = try prepare(.file, workload)
    defer { removeScratchFolder(prepared.root) }
    print("ready")
    fflush(nil)
    while readLine() != nil {
        let start = now()
        consume(try BenchmarkStore.file.open(prepared.name, root: prepared.root).generation)
        print(now() - start)
        fflush(nil)
    }
case "serve-read-after-write" where arguments.count == 4:
    // For scripts/compare_peers.py, which alternates blocks of these with msal-extensions' own:
    // prepares a group of TOKENS in STORE (File, Keyring, MSALFile or MSALKeyring) and starts
    // another process that writes to it (serve-writer), prints "ready", then for each line read (a
    // sample count) has the other process write and times the first lookup here after each write,
    // printing the nanoseconds of each on one line.
    guard let kind = BenchmarkStore(rawValue: arguments[2]), kind.isShared else {
        fatalError("STORE: File, Keyring, MSALFile or MSALKeyring")
    }
    let tokens = Int(arguments[3])!
    let prepared = try prepare(kind, Workload(accessTokens: tokens))
    defer { removeScratchFolder(prepared.root) }
    let writer = try WriterProcess(kind: kind, tokens: tokens, name: prepared.name, root: prepared.root)
    defer { writer.close() }
    var serial = 0
    var stale = 0
    defer {
        // A first read that answered from before the write measured nothing: say how many were
        // left out.
        if stale > 0 {
            FileHandle.standardError.write(
                Data(
                    "PeerCompare: \(kind.rawValue): \(stale) first reads of \(serial) did not see the other process's write yet (left out)\n"
                        .utf8))
        }
    }
    print("ready")
    fflush(nil)
    while let line = readLine(), let count = Int(line) {
        var times: [UInt64] = []
        for _ in 0..<count {
            serial += 1
            try writer.write(serial: serial)
            let start = now()
            let found = try prepared.cache.accessToken(
                for: Workload.hitScopes, account: prepared.account, authority: Workload.authority)
            let elapsed = now() - start
            // A lookup that ran before this process heard of the write measured no read: left out.
            if found?.token.secret == "at-\(Workload.probeUser(accessTokens: tokens))-new-\(serial)" {
                times.append(elapsed)
            } else {
                stale += 1
            }
        }
        print(times.map(String.init).joined(separator: " "))
        fflush(nil)
    }
case "serve-writer" where arguments.count == 6:
    // The other process of serve-read-after-write: opens group NAME of STORE under ROOT and, for
    // each line read (a serial number), stores the workload's refresh for the probe user of a
    // TOKENS-token cache as client A, then answers "done".
    guard let kind = BenchmarkStore(rawValue: arguments[2]), let tokens = Int(arguments[3]) else { fatalError("STORE TOKENS") }
    let cache = try TokenCache(clientId: Workload.clientA, group: kind.open(arguments[4], root: arguments[5]))
    let user = Workload.probeUser(accessTokens: tokens)
    print("ready")
    fflush(nil)
    while let line = readLine(), let serial = Int(line) {
        try cache.store(try Workload.response(user: user, serial: serial), for: Workload.request(), signIn: false)
        print("done")
        fflush(nil)
    }
case "spin" where arguments.count == 5 && ["open", "catchUp"].contains(arguments[2]):
    // For profilers: open a file group of TOKENS N times, or catch up N times after a write by
    // a second view of it (standing for another process). STC_SPIN_STORE=Keyring catches up in
    // a KeyringStore group instead (run it under scripts/with-keyring); STC_SPIN_EVICT_MB=64
    // makes each catch-up cold (see evictCaches).
    let workload = Workload(accessTokens: Int(arguments[3])!)
    let spinKind = getenv("STC_SPIN_STORE").flatMap { BenchmarkStore(rawValue: String(cString: $0)) } ?? .file
    let prepared = try prepare(spinKind, workload)
    defer { removeScratchFolder(prepared.root) }
    let peer = try TokenCache(clientId: Workload.clientA, group: spinKind.open(prepared.name, root: prepared.root))
    var readTimes: [Double] = []
    defer {
        if !readTimes.isEmpty {
            FileHandle.standardError.write(
                Data("catch-up and lookup, median of \(readTimes.count): \(median(readTimes) / 1000) us\n".utf8))
        }
    }
    for serial in 0..<Int(arguments[4])! {
        if arguments[2] == "open" {
            // Opening and freeing timed apart (stderr), to see which one a change moved.
            let start = now()
            var group: CacheGroup? = try BenchmarkStore.file.open(prepared.name, root: prepared.root)
            let opened = now()
            consume(group?.generation)
            group = nil
            let freed = now()
            FileHandle.standardError.write(
                Data("open \(Double(opened - start) / 1e6) ms, free \(Double(freed - opened) / 1e6) ms\n".utf8))
        } else {
            try peer.store(
                try Workload.response(user: workload.probeUser, serial: serial + 1), for: Workload.request(), signIn: false)
            evictCaches()
            let start = now()
            consume(
                try prepared.cache.accessToken(
                    for: Workload.hitScopes, account: prepared.account, authority: Workload.authority))
            readTimes.append(Double(now() - start))
        }
    }
case "spin" where arguments.count == 5:
    // For profilers (valgrind --tool=callgrind): one operation N times on a memory group.
    let workload = Workload(accessTokens: Int(arguments[3])!)
    let prepared = try prepare(.memory, workload)
    defer { removeScratchFolder(prepared.root) }
    let refreshes = try Workload.alternatingRefreshes(user: workload.probeUser)
    let response = refreshes[0]
    let request = Workload.request()
    let json = try prepared.group.exportMSAL(includeSecrets: true)
    for iteration in 0..<Int(arguments[4])! {
        switch arguments[2] {
        case "hit":
            consume(
                try prepared.cache.accessToken(for: Workload.hitScopes, account: prepared.account, authority: Workload.authority))
        case "write": consume(try prepared.cache.store(refreshes[iteration % 2], for: request, signIn: false))
        case "accounts": consume(try prepared.solo.accounts())
        case "signOut":
            try prepared.cache.store(response, for: request, signIn: true)
            try prepared.cache.signOut(prepared.account)
        case "serialize": consume(try prepared.group.exportMSAL(includeSecrets: true))
        case "deserialize": consume(try CacheGroup(inMemory: "stc-compare-import").importMSAL(json))
        default: fatalError("spin: hit | accounts | write | signOut | serialize | deserialize")
        }
    }
default:
    FileHandle.standardError.write(Data(("usage: PeerCompare emit TOKENS PATH | PeerCompare run SIZES [REPEATS]\n").utf8))
    exit(2)
}

/// Times a hit of `client`'s app token for `scope` in `tenant`, in a memory group that imported
/// the MSAL JSON at `path`: the lookup and the acquisition. (Not on the main actor, as an app's
/// server code is not: each call of an async body would hop to it and back.)
func measureAppHit(path: String, tokens: Int, client clientId: String, tenant: String, scope: String, repeats: Int) async throws {
    let group = CacheGroup(inMemory: "stc-compare-app")
    try group.importMSAL(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    let cache = try TokenCache(clientId: clientId, group: group)
    let authority = try Authority("https://login.microsoftonline.com/\(tenant)")
    let scopes: Scopes = [scope]
    guard try cache.appToken(for: scopes, authority: authority) != nil else { fatalError("app-hit: no token for the scope") }
    // Many calls per repeat: a hit is so short that a repeat of fewer is over before a burst of
    // other work on the shared machine is, and one such repeat would decide the median.
    try loop("memory.appHit.\(tokens)", iterations: 200_000, repeats: repeats) {
        consume(try cache.appToken(for: scopes, authority: authority))
    }
    // Nothing is sent: every call is a hit (a miss would fail on this endpoint).
    let client = ConfidentialClient(cache: cache, credentialKind: .secret, endpoint: NoEndpoint())
    try await loop("memory.appAcquireHit.\(tokens)", iterations: 200_000, repeats: repeats) {
        consume(try await client.acquireAppToken(for: scopes, authority: authority, credential: .secret("unused")))
    }
}

/// A token endpoint that refuses everything: app-hit measures hits only.
struct NoEndpoint: TokenEndpointClient {
    func redeem(refreshToken: String, clientId: String, scopes: Scopes, endpoint: String, timeout: Duration) async throws
        -> TokenResponse
    {
        fatalError("app-hit: a refresh was attempted")
    }

    func requestToken(grant: ConfidentialGrant, clientId: String, scopes: Scopes, endpoint: String, timeout: Duration)
        async throws -> TokenResponse
    {
        fatalError("app-hit: a token request was sent; every call should have been a hit")
    }
}
