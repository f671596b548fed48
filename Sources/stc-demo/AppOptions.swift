import ArgumentParser
import SecureTokenCache

/// The options every step needs: which app, which authority, which group and store.
struct AppOptions: ParsableArguments {
    @Option(help: "The authority, such as http://127.0.0.1:8400/common.")
    var authority: String

    @Option(help: "The app's client id.")
    var client: String

    @Option(help: "The cache group the apps share.")
    var group = "com.example.stc-demo"

    @Option(help: "Which store holds the group: auto, keyring, file or memory.")
    var store = "auto"

    @Option(help: "The file store's root folder.")
    var directory: String?

    @Option(help: "A key file for the file store (32 random bytes, created 0600 if missing).")
    var keyFile: String?

    @Option(help: "How many seconds to wait for another process's write to the group before giving up.")
    var lockTimeout = 10.0

    @Option(help: "How many seconds one Secret Service call may take before giving up.")
    var keyringTimeout = 10.0

    /// The app's cache over the shared group.
    func open() throws -> (cache: TokenCache, authority: Authority) {
        let choice = StoreKind(rawValue: store)
        guard StoreKind.all.contains(choice) else {
            throw ValidationError("--store must be one of \(StoreKind.all.map(\.rawValue).joined(separator: ", "))")
        }
        for (name, seconds) in [("--lock-timeout", lockTimeout), ("--keyring-timeout", keyringTimeout)]
        where !(seconds > 0 && seconds.isFinite) {
            throw ValidationError("\(name) must be a positive number of seconds")
        }
        var configuration = CacheConfiguration(
            store: choice, directory: directory, keySource: keyFile.map { .keyFile(path: $0) },
            lockTimeout: .milliseconds(Int64(lockTimeout * 1000)))
        configuration.keyringTimeout = .milliseconds(Int64(keyringTimeout * 1000))
        let group = try CacheGroup.open(self.group, configuration: configuration)
        return (try TokenCache(clientId: client, group: group), try Authority(authority))
    }

    /// A short name for the app in messages.
    var app: String { "app \(client.prefix(8))" }

    func say(_ text: String) { print("[\(app)] \(text)") }
}

/// Runs `body`, turning "interaction required" into exit status 2 with a plain message.
func reportingInteraction<T>(_ options: AppOptions, _ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as TokenCacheError where error.code == .interactionRequired {
        let server = error.server.map { " (server: \($0.error ?? "-")\($0.suberror.map { ", \($0)" } ?? ""))" } ?? ""
        options.say("interaction required: \(error.message)\(server)")
        throw ExitCode(2)
    }
}

/// A short, non-reversible fingerprint of a token (FNV-1a 64), to compare tokens between
/// processes without printing them.
func fingerprint(_ token: String) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in token.utf8 {
        hash ^= UInt64(byte)
        hash &*= 0x100_0000_01b3
    }
    let hex = String(hash, radix: 16)
    return String(repeating: "0", count: 16 - hex.count) + hex
}
