// swift-tools-version: 6.1
import PackageDescription

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
        .executableTarget(
            name: "stc-demo",
            dependencies: [
                "SecureTokenCache",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SecureTokenCacheTests",
            // stc-demo: built for the multi-process single sign-on tests, which spawn it.
            dependencies: ["SecureTokenCache", "stc-demo"],
            resources: [.copy("Fixtures")],
            swiftSettings: strictSettings
        ),
    ]
)
