public import Logging

/// How to open a cache group: which store, where, where its key comes from, and where the
/// library's messages for operators go.
///
/// The default, `CacheConfiguration()`, lets ``CacheGroup/open(_:configuration:)`` choose the
/// store (``StoreKind/auto``). A service without a desktop session names the file store and a
/// key:
///
/// ```swift
/// let configuration = CacheConfiguration(
///     store: .file, keySource: .keyFile(path: "/etc/contoso/token-cache.key"))
/// let group = try CacheGroup.open("com.contoso.daemon", configuration: configuration)
/// ```
public struct CacheConfiguration: Sendable {
    /// Which store holds the group: ``StoreKind/auto`` or a backend's kind.
    public typealias StoreChoice = StoreKind

    /// Where a file-store group's key comes from.
    ///
    /// A group remembers which kind of key protects it (and, for a passphrase, the Argon2id salt
    /// and limits); opening it with another kind, another passphrase or another key file fails
    /// with ``TokenCacheError/Code/wrongKey``. Groups in the keyring store always use the
    /// keyring's key, whatever this says.
    public enum KeySource: Sendable, Hashable, CustomStringConvertible {
        /// The group key is one item in the Secret Service (created on first use), the same item
        /// the keyring store uses, so a group keeps its key when it moves between the stores.
        case keyring
        /// A passphrase, stretched with Argon2id.
        case passphrase(String)
        /// A passphrase read from the named environment variable when the group is opened.
        case passphraseFromEnvironment(variable: String)
        /// A key file of 32 random bytes, mode `0600`; created when a new group is made and the
        /// file does not exist yet.
        case keyFile(path: String)

        /// Describes the source without revealing a passphrase.
        public var description: String {
            switch self {
            case .keyring: "keyring"
            case .passphrase: "passphrase"
            case .passphraseFromEnvironment(let variable): "passphrase from $\(variable)"
            case .keyFile(let path): "key file \(path)"
            }
        }
    }

    /// Which store holds the group. Default: `.auto`.
    public var store: StoreChoice
    /// The root folder of file-store groups. Default: `$XDG_DATA_HOME/secure-token-cache`.
    public var directory: String?
    /// Where a file-store group's key comes from. Default (`nil`): the keyring when the Secret
    /// Service is reachable and unlocked, else the key file
    /// `$XDG_CONFIG_HOME/secure-token-cache/keys/<group>.key`.
    public var keySource: KeySource?
    /// Whether the Secret Service may show an unlock prompt. Default: `false`.
    public var allowsInteraction: Bool
    /// How long a writer waits for another process's transaction. Default: 10 seconds.
    public var lockTimeout: Duration
    /// The longest one Secret Service call may take (connecting to the session bus, a lookup, a
    /// store) before it fails with ``TokenCacheError/Code/keyringTimeout``. Default: 10 seconds.
    /// An unlock prompt, when ``allowsInteraction`` lets one show, is waited for separately
    /// (``KeyringOptions/interactionTimeout``).
    public var keyringTimeout: Duration = .seconds(10)
    /// The most bytes a group may take in this process's memory, for a server that caches a
    /// token per caller; `nil` (the default) for no limit. The memory store and a database that a
    /// fleet shares (`CacheGroup.open(_:postgres:configuration:)`) take one; a group in a file or
    /// the keyring is shared with other processes on the machine, whose tokens are not this
    /// process's to evict.
    ///
    /// In memory, a write that takes the group past the limit also evicts, in the same
    /// transaction: every expired access token, then whole partitions (``CachePartition``), least
    /// recently used first (a lookup that answers, or a write, is a use), until the group is under
    /// 75% of the limit. What that write stored is kept. An evicted user is signed out of every
    /// client. In a database, the limit bounds what the process keeps of it: a lookup loads its
    /// partition on a miss, and the least recently used partitions are dropped from memory (not
    /// from the database) to stay under the limit: the load that takes the process past it drops
    /// partitions until it holds 90% of it. Each entry is counted as four times its
    /// stored size plus a fixed cost for its place in the index, measured so that the process's
    /// resident memory for the group stays within the limit.
    public var memoryLimit: Int?
    /// The other tools' shared cache to open (for ``StoreKind/msalFile`` and
    /// ``StoreKind/msalKeyring``); `nil` for the library's own stores.
    public var sharedCache: MSALSharedCache?
    /// What a group in a database that a fleet shares does while the database does not answer.
    /// Default: ``DatabaseOutagePolicy/keepInMemory``.
    public var whenDatabaseUnavailable: DatabaseOutagePolicy = .keepInMemory

    /// What a group in a database does while the database does not answer (down, unreachable, or
    /// slower than its timeout). Either way, lookups of what the instance holds are answered from
    /// its memory, and no call waits longer than the database's timeout.
    public enum DatabaseOutagePolicy: Sendable, Hashable {
        /// Keeps serving: a write is applied to this instance's memory at once (its lookups
        /// answer from it) and committed to the database when it answers again, in the order
        /// made; a record another instance wrote in between keeps the other instance's write. A
        /// lookup of what the instance does not hold is a miss, so the app asks the authority
        /// instead of failing. ``CacheGroup/pendingWrites`` counts what waits (a process that
        /// ends first loses it, as the other instances never saw it), and a warning is logged.
        case keepInMemory
        /// Fails: a write throws ``TokenCacheError/Code/databaseUnavailable`` and changes
        /// nothing, and so does a lookup that needs the database.
        case fail
    }
    /// Set by ``CacheGroup/openExisting(_:configuration:)``: the group is opened to be read or
    /// emptied, so opening it creates no folder or key file a store would make for a new group.
    package var opensExistingOnly = false
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

    /// A configuration that opens `sharedCache`, a cache the other MSAL SDKs' extensions share
    /// (for example ``MSALSharedCache/azureCLI()``), in the store of its kind. A lock held by
    /// another tool is waited for at most `lockTimeout` (the tools themselves wait about five
    /// seconds).
    ///
    /// ```swift
    /// let group = try CacheGroup.open("azure-cli", configuration: CacheConfiguration(sharedCache: .azureCLI()))
    /// ```
    public init(
        sharedCache: MSALSharedCache, allowsInteraction: Bool = false, lockTimeout: Duration = .seconds(10),
        logger: Logger = .discarding
    ) {
        self.init(store: sharedCache.kind, allowsInteraction: allowsInteraction, lockTimeout: lockTimeout, logger: logger)
        self.sharedCache = sharedCache
    }
}
