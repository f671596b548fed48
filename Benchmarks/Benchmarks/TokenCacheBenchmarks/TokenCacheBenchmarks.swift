import Benchmark
import BenchmarkWorkload
import Foundation
import Glibc
import SecureTokenCache

// Names are `<Store>.<operation>.<cached access tokens>` and carry no spaces or '/':
// `thresholds check` looks files up by the raw name.
//
// Knobs (environment), for short CI passes (scripts/bench-check):
//   STC_BENCH_MAX_MS          longest a benchmark runs, in ms (default 2000)
//   STC_BENCH_MAX_ITERATIONS  most samples a benchmark takes (default 1000)
let benchmarks: @Sendable () -> Void = {
    let maxDuration = Duration.milliseconds(environmentInt("STC_BENCH_MAX_MS") ?? 2_000)
    let maxIterations = environmentInt("STC_BENCH_MAX_ITERATIONS") ?? 1_000
    // Allocation counts gate CI; a few percent of slack absorbs the odd amortised growth of a
    // buffer. Wall-clock is reported, never gated (it moves by 20% on this shared machine).
    let allocationGate: [BenchmarkMetric: BenchmarkThresholds] = [
        .mallocCountTotal: .init(relative: [.p90: 5.0], absolute: [:])
    ]
    // Sub-microsecond to tens-of-microseconds work: 1,000 operations per sample, so the
    // harness's own clock reads and allocations vanish in the per-operation figures.
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 10,
        scalingFactor: .kilo,
        maxDuration: maxDuration,
        maxIterations: maxIterations,
        thresholds: allocationGate
    )
    // Work of a millisecond or more, or work that needs per-operation setup (a durable write,
    // catching up after a write, opening a group): one operation per sample.
    let single = Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 3,
        scalingFactor: .one,
        maxDuration: maxDuration,
        maxIterations: maxIterations,
        thresholds: allocationGate
    )

    // The harness may end a benchmark process without running atexit handlers: remove the
    // file-store fixtures' folders when the benchmark's iterations are done, too.
    removeScratchFoldersAtExit()
    Benchmark.teardown = { Fixture.discardAll() }
    // The stores over the other tools' documents are measured beside msal-extensions
    // (PeerCompare), whose figures they must be compared with.
    for kind in BenchmarkStore.allCases where !kind.isSharedDocument {
        if let reason = kind.unavailability {
            // Not registered, so a run without the store lists nothing rather than failures.
            if firstTimeThisRun("skip-\(kind.rawValue)") {
                FileHandle.standardError.write(Data(("note: \(kind.rawValue).* benchmarks skipped: \(reason)\n").utf8))
            }
            continue
        }
        let label = kind.rawValue
        // In memory a write is a few microseconds; durable writes (fsync, D-Bus) take ms.
        let write = kind == .memory ? Benchmark.defaultConfiguration : single

        for size in Workload.sizes {
            // MARK: Lookups

            Benchmark("\(label).accessTokenHit.\(size)") { benchmark in
                let fixture = try Fixture.get(kind, size)
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    blackHole(
                        try fixture.cache.accessToken(
                            for: Workload.hitScopes, account: fixture.account, authority: Workload.authority))
                }
            }

            Benchmark("\(label).accessTokenMiss.\(size)") { benchmark in
                let fixture = try Fixture.get(kind, size)
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    blackHole(
                        try fixture.cache.accessToken(
                            for: Workload.missScopes, account: fixture.account, authority: Workload.authority))
                }
            }

            Benchmark("\(label).accountByUsername.\(size)") { benchmark in
                let fixture = try Fixture.get(kind, size)
                let name = fixture.account.username
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    blackHole(try fixture.cache.account(username: name))
                }
            }

            // A client signed into one account lists it as fast among 100,000 tokens as among 10:
            // listing costs in proportion to the accounts returned.
            Benchmark("\(label).accountsForClient.\(size)") { benchmark in
                let fixture = try Fixture.get(kind, size)
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    blackHole(try fixture.soloClient.accounts())
                }
            }

            // The refresh tokens client A would try for the account: its own, then the family's.
            Benchmark("\(label).refreshTokens.\(size)") { benchmark in
                let fixture = try Fixture.get(kind, size)
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    blackHole(try fixture.cache.refreshTokens(for: fixture.account, authority: Workload.authority))
                }
            }

            // What an app does before trusting what it holds: read the group's generation, then
            // look up (the lookup compares it with its snapshot's).
            Benchmark("\(label).freshnessCheck.\(size)") { benchmark in
                let fixture = try Fixture.get(kind, size)
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    blackHole(fixture.group.generation)
                    blackHole(
                        try fixture.cache.accessToken(
                            for: Workload.hitScopes, account: fixture.account, authority: Workload.authority))
                }
            }

            // MARK: acquireTokenSilently

            // The public silent-acquisition API on a cached, unexpired token: no network (the
            // endpoint fails every call, so a miss would show as an error, not as a fast path).
            // Issue 7's headline figure against msal-python's acquire_token_silent.
            Benchmark("\(label).acquireTokenSilentlyHit.\(size)") { benchmark in
                let fixture = try Fixture.get(kind, size)
                let endpoint = NoNetwork()
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    blackHole(
                        try await fixture.cache.acquireTokenSilently(
                            scopes: Workload.hitScopes, account: fixture.account, authority: Workload.authority,
                            endpoint: endpoint))
                }
            }

            // MARK: Writes

            // Ingest of one token response (a silent refresh of the probe user's token): a write
            // must cost about the same at every size. Durable stores persist it before returning.
            // Two refreshes alternate, so that every store changes the cache.
            let refreshes = try! Workload.alternatingRefreshes(user: Workload.probeUser(accessTokens: size))
            let response = refreshes[0]
            let request = Workload.request()
            Benchmark("\(label).store.\(size)", configuration: write) { benchmark in
                let fixture = try Fixture.get(kind, size)
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    blackHole(try fixture.cache.store(refreshes[fixture.nextWrite() & 1], for: request, signIn: false))
                }
            }

            // Per-client sign-out, then signing back in so the next iteration finds the same
            // state: the sum of both; `store` above is most of the second half.
            Benchmark("\(label).signOutSignIn.\(size)", configuration: write) { benchmark in
                let fixture = try Fixture.get(kind, size)
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    try fixture.cache.signOut(fixture.account)
                    blackHole(try fixture.cache.store(response, for: request, signIn: true))
                }
            }

            // Sign-out alone: the sign-in that restores the state runs before the clock starts.
            Benchmark("\(label).signOut.\(size)", configuration: single) { benchmark in
                let fixture = try Fixture.get(kind, size)
                try fixture.cache.store(response, for: request, signIn: true)
                benchmark.startMeasurement()
                try fixture.cache.signOut(fixture.account)
                benchmark.stopMeasurement()
            }

            // MARK: Other processes

            // Another process (a second CacheGroup over the same store) wrote; the first lookup
            // here afterwards catches up with that write before answering.
            if kind.isShared {
                Benchmark("\(label).catchUpLookup.\(size)", configuration: single) { benchmark in
                    let fixture = try Fixture.get(kind, size)
                    try fixture.peer().store(refreshes[fixture.nextWrite() & 1], for: request, signIn: false)
                    benchmark.startMeasurement()
                    blackHole(
                        try fixture.cache.accessToken(
                            for: Workload.hitScopes, account: fixture.account, authority: Workload.authority))
                    benchmark.stopMeasurement()
                }
            }
        }

        // MARK: Opening a group

        if kind == .memory {
            // Importing 10,000 tokens of MSAL JSON into a new group (parse, index, records).
            let workload = Workload(accessTokens: 10_000)
            Benchmark("Memory.importMSAL.10000", configuration: single) { benchmark in
                for _ in benchmark.scaledIterations {
                    let group = CacheGroup(inMemory: "stc-bench-import")
                    blackHole(try group.importMSAL(workload.json))
                }
            }
            // Importing them into a group that holds the first 1,000 users' tokens already: those
            // stay in place (unchanged), the rest come after them.
            let held = Workload(accessTokens: 1_000)
            Benchmark("Memory.importMSALIntoHeld.10000", configuration: single) { benchmark in
                for _ in benchmark.scaledIterations {
                    let group = CacheGroup(inMemory: "stc-bench-import")
                    try group.importMSAL(held.json)
                    benchmark.startMeasurement()
                    blackHole(try group.importMSAL(workload.json))
                    benchmark.stopMeasurement()
                }
            }
            // Exporting them again as msal-python's bytes (what its serialize() writes).
            Benchmark("Memory.exportMSAL.10000", configuration: single) { benchmark in
                let (group, _) = try workload.open()
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations { blackHole(try group.exportMSAL(includeSecrets: true)) }
                benchmark.stopMeasurement()
            }
        } else {
            // Opening an existing group: reading and decrypting everything, building the index.
            // (A 100,000-token keyring group would be one secret of about 60 MB: not measured.)
            let sizes = kind == .keyring ? [10, 1_000, 10_000] : [10, 1_000, 10_000, 100_000]
            for size in sizes {
                Benchmark("\(label).open.\(size)", configuration: single) { benchmark in
                    let fixture = try Fixture.get(kind, size)
                    benchmark.startMeasurement()
                    blackHole(try fixture.reopen().generation)
                    benchmark.stopMeasurement()
                }
            }
        }
    }
}

/// Whether `what` happens for the first time in this harness run. Every benchmark runs in a
/// process of its own, all children of one BenchmarkTool: a marker file named after that parent
/// (created exclusively) lets a note print once per run rather than once per benchmark.
func firstTimeThisRun(_ what: String) -> Bool {
    let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    let marker = "\(base)/stc-bench-note-\(getppid())-\(what)"
    let fd = open(marker, O_CREAT | O_EXCL | O_WRONLY, 0o600)
    guard fd >= 0 else { return false }
    close(fd)
    removeMarkersOfEndedRuns(in: base)
    return true
}

/// Removes the markers of harness runs whose BenchmarkTool has exited.
func removeMarkersOfEndedRuns(in base: String) {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: base) else { return }
    for name in names where name.hasPrefix("stc-bench-note-") {
        let parts = name.split(separator: "-")
        guard parts.count > 3, let pid = pid_t(parts[3]), kill(pid, 0) != 0, errno == ESRCH else { continue }
        unlink("\(base)/\(name)")
    }
}

/// An integer from the environment, if set and valid.
func environmentInt(_ name: String) -> Int? {
    guard let value = getenv(name) else { return nil }
    return Int(String(cString: value))
}
