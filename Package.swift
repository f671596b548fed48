// swift-tools-version: 6.1
import PackageDescription

/// Whether to build the PostgreSQL store (`SecureTokenCachePostgres`) and its tests. The sanitizer
/// passes set `STC_WITHOUT_POSTGRES=1`: they check this package's code, not SwiftNIO's, and
/// building SwiftNIO twice more under instrumentation would cost CI more than it finds.
let withPostgres = Context.environment["STC_WITHOUT_POSTGRES"] == nil

/// Whether to build the server sample (`stc-server-sample`, Examples/ServerSample) and Hummingbird,
/// which it runs on: only when `STC_SERVER_SAMPLE` is set (`scripts/server-sample` sets it, and
/// `scripts/demo-fleet` builds through it), so that an app that depends on this package never
/// resolves or builds a web server. It needs the PostgreSQL store.
let withServerSample = withPostgres && Context.environment["STC_SERVER_SAMPLE"] != nil

/// Strict upcoming features on every Swift target (see ../shared/design/style.md).
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "SecureTokenCache",
    products: [
        .library(name: "SecureTokenCache", targets: ["SecureTokenCache"]),
        .executable(name: "cachetool", targets: ["cachetool"]),
        .executable(name: "stc-demo", targets: ["stc-demo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-atomics", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        .systemLibrary(
            name: "CLibsecret",
            pkgConfig: "libsecret-1",
            providers: [.apt(["libsecret-1-dev"])]
        ),
        .target(
            name: "SecureTokenCache",
            dependencies: [
                "CSodium",
                "CLibsecret",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "HashTreeCollections", package: "swift-collections"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "cachetool",
            dependencies: [
                "SecureTokenCache",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        // Test helper: a second process for the keyring tests (two processes sharing one group,
        // and the availability matrix with a different session bus in the environment).
        .executableTarget(
            name: "stc-keyring-helper",
            dependencies: ["SecureTokenCache"],
            swiftSettings: strictSettings
        ),
        // Spawned by the multi-process FileStore tests (a real second process per writer/reader).
        .executableTarget(
            name: "stc-testhelper",
            dependencies: ["SecureTokenCache"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "stc-demo",
            dependencies: [
                "SecureTokenCache",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        // The code samples of the README and the DocC articles: every build compiles them, so they
        // cannot drift from the API; `scripts/docs` checks that each sample appears here.
        .executableTarget(
            name: "stc-examples",
            dependencies: ["SecureTokenCache"],
            path: "Examples",
            // The server sample is a target of its own, only while STC_SERVER_SAMPLE is set (below).
            exclude: ["ServerSample"],
            swiftSettings: strictSettings
        ),
        // What both test targets share: the tags `scripts/test --fast` filters on, and the
        // package's root for fixtures and scripts.
        .target(
            name: "TestSupport",
            path: "Tests/TestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SecureTokenCacheTests",
            // The helpers the multi-process tests spawn: FileStore writers and readers, keyring
            // clients on other buses, and stc-demo for single sign-on across processes.
            dependencies: [
                "SecureTokenCache", "TestSupport", "stc-testhelper", "stc-keyring-helper", "stc-demo",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: strictSettings
        ),
        // End-to-end tests of the built cachetool binary. Depending on the executable makes
        // SwiftPM build it before the tests run; the tests run it as a separate process.
        .testTarget(
            name: "CachetoolTests",
            dependencies: ["SecureTokenCache", "TestSupport", "cachetool"],
            swiftSettings: strictSettings
        ),
    ]
)

if withPostgres {
    // A library of its own, so that an app that does not keep its cache in PostgreSQL never builds
    // or links SwiftNIO.
    package.products.append(.library(name: "SecureTokenCachePostgres", targets: ["SecureTokenCachePostgres"]))
    package.dependencies += [
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ]
    package.targets.append(
        .target(
            name: "SecureTokenCachePostgres",
            dependencies: [
                "SecureTokenCache",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // The pool's own error type, which PostgresClient throws as it is when its
                // circuit breaker has tripped (the database unreachable for a while).
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings
        ))
    // The tests, the helper their multi-process checks spawn (`stc-testhelper --store postgres`),
    // the documentation's samples, and cachetool (`--store postgres`).
    for name in ["SecureTokenCacheTests", "stc-testhelper", "stc-examples", "cachetool"] {
        package.targets.first { $0.name == name }!.dependencies.append("SecureTokenCachePostgres")
    }
    // The tests compare the store's own parameter encodings with postgres-nio's, and hand the
    // store the pool's errors.
    package.targets.first { $0.name == "SecureTokenCacheTests" }!.dependencies += [
        .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
    ]
}

if withServerSample {
    // A web API on Hummingbird that uses the cache as a server does: on-behalf-of tokens for its
    // callers, app-only tokens for itself, in a bounded group in memory or, for a fleet of
    // instances, in PostgreSQL. `scripts/server-sample` and `scripts/demo-fleet` build and run it.
    package.dependencies.append(.package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"))
    package.targets.append(
        .executableTarget(
            name: "stc-server-sample",
            dependencies: [
                "SecureTokenCache", "SecureTokenCachePostgres", .product(name: "Hummingbird", package: "hummingbird"),
            ],
            path: "Examples/ServerSample/Sources",
            swiftSettings: strictSettings
        ))
}
