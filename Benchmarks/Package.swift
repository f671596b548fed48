// swift-tools-version: 6.1
import PackageDescription

// Benchmarks of SecureTokenCache's hot paths (ordo-one/benchmark). A package of its own so the
// library never depends on the harness. Run from the repository root:
//   swift package --package-path Benchmarks benchmark --no-progress
// `PeerCompare` (scripts/compare-peers) times the same workload outside the harness, next to
// msal-python and msal-extensions; `PeerWriter` is the tests' writer beside msal-extensions'.
// They live under Sources/, not Benchmarks/: the benchmark plugin runs every executable whose
// folder sits in a folder named "Benchmarks".
let package = Package(
    name: "Benchmarks",
    dependencies: [
        // Named explicitly: a path dependency's identity would otherwise be the checkout's folder name.
        .package(name: "SecureTokenCache", path: "../"),
        // The MallocInterposer trait alone replaces the default trait set, which would pull a
        // runtime interposer package this machine's mirror does not carry.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        // PeerCompare's fleet rows time a bare prepared SELECT through the client the
        // PostgreSQL store uses, as the floor of a cold read.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // The synthetic cache and the store kinds, shared by the benchmarks and PeerCompare so
        // both measure the same thing.
        .target(
            name: "BenchmarkWorkload",
            dependencies: [.product(name: "SecureTokenCache", package: "SecureTokenCache")],
            path: "Sources/BenchmarkWorkload"
        ),
        .executableTarget(
            name: "TokenCacheBenchmarks",
            dependencies: [
                "BenchmarkWorkload",
                .product(name: "SecureTokenCache", package: "SecureTokenCache"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/TokenCacheBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "PeerCompare",
            dependencies: [
                "BenchmarkWorkload",
                .product(name: "SecureTokenCache", package: "SecureTokenCache"),
                .product(name: "SecureTokenCachePostgres", package: "SecureTokenCache"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Sources/PeerCompare"
        ),
        // The peer proofs' writers of ours (SharedPeerProofs), for release as an app is; without
        // SwiftNIO, so that the tests' release build is the one scripts/bench-check makes anyway.
        .executableTarget(
            name: "PeerWriter",
            dependencies: [.product(name: "SecureTokenCache", package: "SecureTokenCache")],
            path: "Sources/PeerWriter"
        ),
    ]
)
