/// How to open a cache group: which store, where, and where its key comes from.
public struct CacheConfiguration: Sendable, Hashable {
    /// Which store holds the group.
    public enum StoreChoice: String, Sendable, Hashable, CaseIterable {
        /// The Secret Service when it is reachable and unlocked, else the file store; never a
        /// silent fall back to weaker protection for a group that already lives in the keyring.
        case auto
        /// The freedesktop Secret Service (desktop keyring).
        case keyring
        /// The encrypted file store.
        case file
        /// Process memory only; nothing is written.
        case memory
    }

    /// Where a file-store group's key comes from.
    public enum KeySource: Sendable, Hashable {
        /// The group key is one item in the Secret Service (created on first use).
        case keyring
        /// A passphrase, stretched with Argon2id.
        case passphrase(String)
        /// A passphrase read from the named environment variable when the group is opened.
        case passphraseFromEnvironment(variable: String)
        /// A key file of 32 random bytes (created 0600 if missing).
        case keyFile(path: String)
    }

    /// Which store holds the group. Default: `.auto`.
    public var store: StoreChoice
    /// The root folder of file-store groups. Default: `$XDG_DATA_HOME/secure-token-cache`.
    public var directory: String?
    /// Where a file-store group's key comes from. Default: the keyring when reachable.
    public var keySource: KeySource?
    /// Whether the Secret Service may show an unlock prompt. Default: `false`.
    public var allowsInteraction: Bool
    /// How long a writer waits for another process's transaction, in seconds. Default: 10.
    public var lockTimeout: Double

    /// A configuration with the given parts.
    public init(
        store: StoreChoice = .auto,
        directory: String? = nil,
        keySource: KeySource? = nil,
        allowsInteraction: Bool = false,
        lockTimeout: Double = 10
    ) {
        self.store = store
        self.directory = directory
        self.keySource = keySource
        self.allowsInteraction = allowsInteraction
        self.lockTimeout = lockTimeout
    }
}

extension CacheGroup {
    /// Group names become folder names and keyring attribute values: keep them to a safe alphabet.
    static func validate(name: String) throws {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        guard !name.isEmpty, name.count <= 200, name.allSatisfy(allowed.contains), !name.hasPrefix(".") else {
            throw TokenCacheError(
                .invalidArgument,
                "a group name uses letters, digits, '.', '_' and '-' only (at most 200, not starting with '.'), such as com.example.apps"
            )
        }
    }
}
