import Foundation
import Glibc
public import SecureTokenCache

/// Where a benchmarked group lives (the benchmarks' names say `Memory`, `File`, `Keyring`,
/// `MSALFile`, `MSALKeyring`). Adding a store is one case here and one line in ``open``.
public enum BenchmarkStore: String, CaseIterable, Sendable {
    case memory = "Memory"
    case file = "File"
    case keyring = "Keyring"
    /// A plaintext MSAL cache file shared with the other SDKs' extensions (as Azure CLI keeps it).
    case msalFile = "MSALFile"
    /// An MSAL cache document in one Secret Service item, as azure-identity (Python, JS, Java)
    /// keeps it through msal-extensions' `LibsecretPersistence`: raw JSON and a signal file.
    case msalKeyring = "MSALKeyring"

    /// Opens (creating on first use) group `name` of this kind. `root` is a private folder of the
    /// caller's: the file store keeps the group and its key file there. Opening the same name
    /// and root again gives a second view of the same group, as another process would have
    /// (not for the memory store, whose groups are private to one `CacheGroup`).
    public func open(_ name: String, root: String) throws -> CacheGroup {
        switch self {
        case .memory:
            try CacheGroup.open(name, configuration: CacheConfiguration(store: .memory))
        case .file:
            try CacheGroup.open(
                name,
                configuration: CacheConfiguration(
                    store: .file, directory: root + "/groups", keySource: .keyFile(path: root + "/group.key")))
        case .keyring:
            try CacheGroup.open(name, configuration: CacheConfiguration(store: .keyring, directory: root + "/groups"))
        case .msalFile:
            try CacheGroup.open(name, configuration: Self.sharedFile(root: root))
        case .msalKeyring:
            try CacheGroup.open(name, configuration: Self.sharedItem(root: root))
        }
    }

    /// azure-identity's item, with an attribute naming `root` so that each benchmark has an
    /// item of its own.
    private static func sharedItem(root: String) -> CacheConfiguration {
        let item = MSALSharedCache.KeyringItem(
            schema: "msal.cache.nocae",
            attributes: ["MsalClientID": "Microsoft.Developer.IdentityService", "stc-bench": root], label: "MSALCache",
            signalFile: root + "/msal.cache.nocae")
        var configuration = CacheConfiguration(sharedCache: .keyring(item))
        configuration.directory = root + "/groups"
        return configuration
    }

    private static func sharedFile(root: String) -> CacheConfiguration {
        var configuration = CacheConfiguration(sharedCache: .file(path: root + "/msal_token_cache.json"))
        configuration.directory = root + "/groups"
        return configuration
    }

    /// Whether the group is one MSAL document that the other tools' extensions share, which every
    /// write rewrites whole: measured at the sizes msal-extensions is measured at.
    public var isSharedDocument: Bool { self == .msalFile || self == .msalKeyring }

    /// Whether a second `CacheGroup` over the same name sees the first one's writes.
    public var isShared: Bool { self != .memory }

    /// `nil` when this machine can open the store, else why not.
    public var unavailability: String? {
        if self == .keyring || self == .msalKeyring, getenv("DBUS_SESSION_BUS_ADDRESS") == nil {
            return "no D-Bus session bus (run under scripts/with-keyring)"
        }
        do {
            let root = try makeScratchFolder()
            defer { removeScratchFolder(root) }
            let group = try open("stc-bench-probe-\(getpid())", root: root)
            _ = group.generation
            return nil
        } catch {
            return "\(error)"
        }
    }
}

/// A new 0700 folder under $TMPDIR (or /tmp) for one group's files.
public func makeScratchFolder() throws -> String {
    let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    var template = Array("\(base)/stc-bench-XXXXXX".utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        throw TokenCacheError(.ioFailure, "could not create a scratch folder under \(base)")
    }
    return String(cString: made)
}

/// Removes a folder made by ``makeScratchFolder()`` and everything in it.
public func removeScratchFolder(_ path: String) {
    guard path.contains("/stc-bench-") else { return }
    try? FileManager.default.removeItem(atPath: path)
}
