// swift-tools-version: 6.1
import PackageDescription

// A web API on Hummingbird that uses SecureTokenCache as a server does: on-behalf-of tokens for
// its callers, app-only tokens for itself, in a bounded cache in memory or, for a fleet of
// instances, in PostgreSQL (SecureTokenCachePostgres, which the root package builds unless
// STC_WITHOUT_POSTGRES is set). Its own package, so that the library and its tests never build a
// web server; `scripts/server-sample` and `scripts/demo-fleet` build and run it against the fake
// authority.
let package = Package(
    name: "ServerSample",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "SecureTokenCache", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
    ],
    targets: [
        .executableTarget(
            name: "stc-server-sample",
            dependencies: [
                .product(name: "SecureTokenCache", package: "SecureTokenCache"),
                .product(name: "SecureTokenCachePostgres", package: "SecureTokenCache"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            path: "Sources",
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]
        )
    ]
)
