public import Logging

/// How to open a cache group: which store, where, where its key comes from, and where the
/// library's messages for operators go.
public struct CacheConfiguration: Sendable {
    /// Which store holds the group: ``StoreKind/auto`` or a backend's kind.
    public typealias StoreChoice = StoreKind

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
    /// How long a writer waits for another process's transaction. Default: 10 seconds.
    public var lockTimeout: Duration
    /// Where the library says what an operator needs to know (which store was chosen and why,
    /// damage found, processes that do not share the group's coordination files). Messages
    /// never hold a token, a secret, a fingerprint of one, or a user name. Default: discards
    /// everything.
    public var logger: Logger

    /// A configuration with the given parts.
    public init(
        store: StoreChoice = .auto,
        directory: String? = nil,
        keySource: KeySource? = nil,
        allowsInteraction: Bool = false,
        lockTimeout: Duration = .seconds(10),
        logger: Logger = .discarding
    ) {
        self.store = store
        self.directory = directory
        self.keySource = keySource
        self.allowsInteraction = allowsInteraction
        self.lockTimeout = lockTimeout
        self.logger = logger
    }
}
