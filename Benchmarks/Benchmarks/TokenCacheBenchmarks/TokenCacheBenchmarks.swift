import Benchmark
import SecureTokenCache

// Names carry no spaces or '/': `thresholds check` looks files up by the raw name.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 10,
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 1_000
    )

    let scopes: Scopes = ["Scope0.Read"]
    let missing: Scopes = ["Never.Granted"]

    for size in Workload.sizes {
        Benchmark("Memory.accessTokenHit.\(size)") { benchmark in
            let fixture = try Fixture.memory(size)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try fixture.cache.accessToken(for: scopes, account: fixture.account, authority: Workload.authority))
            }
        }

        Benchmark("Memory.accessTokenMiss.\(size)") { benchmark in
            let fixture = try Fixture.memory(size)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try fixture.cache.accessToken(for: missing, account: fixture.account, authority: Workload.authority))
            }
        }

        Benchmark("Memory.accountByUsername.\(size)") { benchmark in
            let fixture = try Fixture.memory(size)
            let name = fixture.account.username
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try fixture.cache.account(username: name))
            }
        }

        // A client signed into one account lists it as fast among 100,000 tokens as among 10:
        // listing costs in proportion to the accounts returned.
        Benchmark("Memory.accountsForClient.\(size)") { benchmark in
            let fixture = try Fixture.memory(size)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try fixture.soloClient.accounts())
            }
        }
    }
}
