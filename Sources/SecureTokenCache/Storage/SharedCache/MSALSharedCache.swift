/// A token cache the Microsoft tools share through the MSAL SDKs' "extensions" persistence
/// (Azure CLI, azure-identity, Azure PowerShell, the .NET dev tools): the whole MSAL unified
/// cache as one JSON document, in a file or in one Secret Service item, guarded by a lock file.
///
/// Open one as a group with ``CacheConfiguration/init(sharedCache:allowsInteraction:lockTimeout:logger:)``:
/// lookups are answered from the in-memory index as for any group, and every write is a
/// read-modify-write of the document under the tools' lock, so their entries, and the parts of
/// the document this library does not know, survive it.
///
/// ```swift
/// let group = try CacheGroup.open("azure-cli", configuration: CacheConfiguration(sharedCache: .azureCLI()))
/// ```
///
/// These caches are the other tools' format and cannot be sealed: a file is plaintext JSON
/// protected only by its mode, and a keyring item is readable by any process of the user while
/// the collection is unlocked. ``StoreDescription/protection`` says so.
public struct MSALSharedCache: Sendable, Hashable, CustomStringConvertible {
    /// Where the document lives.
    public enum Location: Sendable, Hashable {
        /// A plaintext JSON file.
        case file(path: String)
        /// One Secret Service item, with a signal file the tools touch after each write.
        case keyring(KeyringItem)
    }

    /// How a document is held in a keyring item.
    public enum Encoding: String, Sendable, Hashable, CaseIterable {
        /// The JSON text itself (msal-extensions for Python, msal-node).
        case raw
        /// Base64 of the JSON text (MSAL.NET, msal4j and Go extensions).
        case base64
    }

    /// The Secret Service item that holds a document, and the file that signals its changes.
    public struct KeyringItem: Sendable, Hashable {
        /// The libsecret schema name.
        public var schema: String
        /// The item's attributes (never a secret: any process of the user can read them).
        public var attributes: [String: String]
        /// The item's label.
        public var label: String
        /// The alias of the collection the item is stored in (`default` for the default
        /// collection, as the tools use it).
        public var collection: String
        /// How the document is written into the item.
        public var encoding: Encoding
        /// Whether lookups match the schema name too (`xdg:schema`); the .NET, Java and Go
        /// extensions do not match it.
        public var matchesSchemaName: Bool
        /// The file whose change tells every tool that the item changed (created if missing).
        public var signalFile: String

        /// An item description with the given parts.
        public init(
            schema: String, attributes: [String: String], label: String, collection: String = "default",
            encoding: Encoding = .raw, matchesSchemaName: Bool = true, signalFile: String
        ) {
            self.schema = schema
            self.attributes = attributes
            self.label = label
            self.collection = collection
            self.encoding = encoding
            self.matchesSchemaName = matchesSchemaName
            self.signalFile = signalFile
        }
    }

    /// A short name: the preset's (`azure-cli`, ...) or `custom`.
    public var name: String
    /// Where the document lives.
    public var location: Location
    /// The lock file every tool creates while it writes (by default the document's path, or the
    /// signal file's, with `.lockfile` appended).
    public var lockFile: String

    /// A shared cache at `location`, locked with `lockFile` (default: the document's or signal
    /// file's path with `.lockfile` appended).
    public init(name: String = "custom", location: Location, lockFile: String? = nil) {
        self.name = name
        self.location = location
        switch location {
        case .file(let path): self.lockFile = lockFile ?? path + ".lockfile"
        case .keyring(let item): self.lockFile = lockFile ?? item.signalFile + ".lockfile"
        }
    }

    /// A plaintext JSON file at `path`.
    public static func file(path: String, lockFile: String? = nil) -> MSALSharedCache {
        MSALSharedCache(location: .file(path: path), lockFile: lockFile)
    }

    /// A keyring item.
    public static func keyring(_ item: KeyringItem, lockFile: String? = nil) -> MSALSharedCache {
        MSALSharedCache(location: .keyring(item), lockFile: lockFile)
    }

    /// The store kind that opens this cache: ``StoreKind/msalFile`` or ``StoreKind/msalKeyring``.
    public var kind: StoreKind {
        switch location {
        case .file: .msalFile
        case .keyring: .msalKeyring
        }
    }

    /// The file the tools watch: the document itself, or the keyring item's signal file.
    public var watchedFile: String {
        switch location {
        case .file(let path): path
        case .keyring(let item): item.signalFile
        }
    }

    /// Refuses a relative document, signal or lock file: each is watched and locked by its
    /// folder, which every tool and process must name alike whatever its working directory.
    func requireAbsolutePaths() throws {
        for (what, path) in [("file", watchedFile), ("lock file", lockFile)] where !path.hasPrefix("/") {
            throw TokenCacheError(
                .invalidArgument, "the shared cache's \(what) \(path) is not an absolute path; give its full path")
        }
    }

    /// Names the cache and where it is, without a secret.
    public var description: String {
        switch location {
        case .file(let path): "\(name) (file \(path))"
        case .keyring(let item): "\(name) (keyring item \(item.schema), signal file \(item.signalFile))"
        }
    }
}

extension StoreKind {
    /// A plaintext MSAL JSON file the other SDKs' extensions share (``MSALSharedCache``).
    public static let msalFile = StoreKind(rawValue: "msal-file")
    /// An MSAL JSON document in one Secret Service item, as the other SDKs' extensions keep it
    /// (``MSALSharedCache``).
    public static let msalKeyring = StoreKind(rawValue: "msal-keyring")
}
