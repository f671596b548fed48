import BenchmarkWorkload
import Foundation
import Glibc
import SecureTokenCache

/// `PeerCompare scale-point PATH TOKENS`: one point of the scaling curves, in a process of its
/// own so that its resident memory is the memory of this cache alone. Reads the MSAL JSON at
/// PATH (`PeerCompare emit TOKENS`), imports it into a memory group, lets the document go and
/// records the process's resident memory; then times the silent hit, the miss, the solo client's
/// accounts and the export on that group, and the open of a file group holding the same cache.
/// scripts/scale_peers.py runs msal-python's side of each point the same way.
func measureScalePoint(path: String, tokens: Int) async throws {
    // The baseline is taken once the code an import runs is loaded and initialised, as
    // msal-python's is taken after `import msal`: the curve is the cache's memory, not the
    // runtime's.
    try CacheGroup(inMemory: "stc-scale-warm-up").importMSAL(Workload(accessTokens: 10).json)
    let baseline = residentBytes()
    // Fewer samples as a cache grows: the largest imports are long.
    let repeats = tokens <= 10_000 ? 7 : tokens <= 100_000 ? 3 : 1
    var group: CacheGroup?
    var document = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    try loop("scale.import.\(tokens)", iterations: 1, repeats: repeats) {
        group = nil
        let imported = CacheGroup(inMemory: "stc-scale")
        try imported.importMSAL(document)
        group = imported
    }
    document = []
    guard let group else { return }
    // An import gives the heap's free pages back once the process has done no other large work
    // for a moment (HeapTrim in the library): wait for that, as a process holding the cache does
    // before it next looks.
    try await Task.sleep(for: .seconds(2))
    let resident = residentBytes()
    results.append(("scale.resident.\(tokens)", Measurement(ns: Double(resident), samples: 1)))
    results.append(("scale.residentGrowth.\(tokens)", Measurement(ns: Double(resident - baseline), samples: 1)))
    results.append(("scale.residentPeak.\(tokens)", Measurement(ns: Double(peakResidentBytes()), samples: 1)))

    let cache = try TokenCache(clientId: Workload.clientA, group: group)
    let solo = try TokenCache(clientId: Workload.soloClient, group: group)
    guard let account = try cache.account(username: "user\(Workload.probeUser(accessTokens: tokens))@contoso.com") else {
        fatalError("scale-point: the probe user is not in \(path)")
    }
    let authority = Workload.authority
    let noNetwork = NoNetwork()
    try await loop("scale.silentHit.\(tokens)", iterations: iterations(300), repeats: 7) {
        consume(
            try await cache.acquireTokenSilently(
                scopes: Workload.hitScopes, account: account, authority: authority, endpoint: noNetwork))
    }
    try loop("scale.miss.\(tokens)", iterations: iterations(300), repeats: 7) {
        consume(try cache.accessToken(for: Workload.missScopes, account: account, authority: authority))
    }
    try loop("scale.accountsSolo.\(tokens)", iterations: iterations(1_000), repeats: 7) {
        consume(try solo.accounts())
    }
    try loop("scale.serialize.\(tokens)", iterations: 1, repeats: repeats) {
        consume(try group.exportMSAL(includeSecrets: true))
    }

    // The open of a file group of the same cache (sealed, on disk), freed after each.
    let root = try makeScratchFolder()
    defer { removeScratchFolder(root) }
    try BenchmarkStore.file.open("stc-scale", root: root).importMSAL(try group.exportMSAL(includeSecrets: true))
    try loop("scale.open.\(tokens)", iterations: 1, repeats: repeats) {
        consume(try BenchmarkStore.file.open("stc-scale", root: root).generation)
    }
}

/// `PeerCompare scale-hold PATH TOKENS`: imports the MSAL JSON at PATH into a memory group as
/// `scale-point` does, lets the document go, prints the resident growth to stderr and exits with
/// the group still alive. Under a heap profiler (`heaptrack`), what the exit leaves allocated is
/// then what the group holds, by the code that allocated it: the census behind the bytes per entry
/// in docs/architecture.md.
func holdScalePoint(path: String, tokens: Int) throws -> Never {
    try CacheGroup(inMemory: "stc-scale-warm-up").importMSAL(Workload(accessTokens: 10).json)
    let baseline = residentBytes()
    let group = CacheGroup(inMemory: "stc-scale")
    do {
        let document = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        try group.importMSAL(document)
    }
    // The document and the import's scratch are freed only now, after the import gave the C
    // heap's free pages back; give back what they leave, as a process that keeps running would.
    if let trim = dlsym(nil, "malloc_trim") {
        _ = unsafeBitCast(trim, to: (@convention(c) (Int) -> Int32).self)(0)
    }
    let growth = residentBytes() - baseline
    FileHandle.standardError.write(Data("scale-hold: \(tokens) access tokens, resident growth \(growth) bytes\n".utf8))
    withExtendedLifetime(group) { exit(0) }
}

/// The most resident memory the process has had (VmHWM), in bytes.
func peakResidentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
    else { return 0 }
    return kilobytes * 1024
}
