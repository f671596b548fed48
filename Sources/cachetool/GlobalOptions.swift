import ArgumentParser
import SecureTokenCache

/// `--store`: the name of any store kind the library has, or of a preset of another tool's
/// shared cache (`azure-cli`, ...).
struct StoreOption: ExpressibleByArgument, Equatable {
    /// The name given.
    var name: String

    /// `kind` as an option value.
    init(_ kind: StoreKind) { name = kind.rawValue }

    init?(argument: String) {
        guard Self.allValueStrings.contains(argument) else { return nil }
        name = argument
    }

    /// The kinds: the library's, and both shared-cache kinds even when this build has no backend
    /// for one, so that opening it says so rather than calling the name unknown.
    static var kinds: [StoreKind] {
        var kinds = StoreKind.all
        for kind in [StoreKind.msalFile, .msalKeyring, .postgres] where !kinds.contains(kind) { kinds.append(kind) }
        return kinds
    }

    static var allValueStrings: [String] { kinds.map(\.rawValue) + MSALSharedCache.presetNames }

    var defaultValueDescription: String { name }

    /// Whether the name is a preset of ``MSALSharedCache``.
    var isPreset: Bool { MSALSharedCache.presetNames.contains(name) }

    /// Whether the store is another tool's shared cache (a preset, `msal-file` or `msal-keyring`).
    var isShared: Bool { isPreset || kind == .msalFile || kind == .msalKeyring }

    /// The kind named; a preset's kind is its cache's.
    var kind: StoreKind { StoreKind(rawValue: name) }
}

/// The options every command that opens a group takes: which group, in which store, with
/// which key, or which other tool's shared cache.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .customLong("group"),
        help: ArgumentHelp(
            "The cache group to open (default: \(CacheGroup.defaultName); for a shared cache, the store's name).",
            valueName: "name"))
    var groupName: String?

    @Option(
        name: .customLong("store"),
        help: ArgumentHelp(
            "Where the group lives: auto, keyring, file, memory, postgres, msal-file or msal-keyring, or a preset: azure-cli, azure-identity, azure-identity-file or azure-identity-dotnet.",
            discussion:
                "auto uses the Secret Service when it is reachable and unlocked, else the file store. memory keeps nothing after cachetool exits. postgres (--url, and the fleet's key: --key-file or --passphrase-env) opens a group a fleet of servers shares in PostgreSQL. msal-file (--path) and msal-keyring (--schema, --attribute, ...) open a cache the other Microsoft tools share, as do the presets with each tool's own defaults; those caches are plaintext JSON or a keyring item, never sealed.",
            valueName: "store"))
    var storeOption: StoreOption?

    @Option(
        help: ArgumentHelp(
            "The root folder of file-store groups (default: $XDG_DATA_HOME/secure-token-cache).", valueName: "path"))
    var dir: String?

    @Option(
        name: .customLong("passphrase-env"),
        help: ArgumentHelp(
            "Read the passphrase of a file-store or PostgreSQL group from this environment variable.", valueName: "var"))
    var passphraseEnvironment: String?

    @Option(
        name: .customLong("key-file"),
        help: ArgumentHelp("Use this key file (32 bytes, 0600) for a file-store or PostgreSQL group.", valueName: "path"))
    var keyFile: String?

    @Option(
        help: ArgumentHelp(
            "The PostgreSQL database of --store postgres, as a URL: postgres://user@host:port/database?sslmode=require.",
            discussion:
                "Without a password in the URL, the PGPASSWORD environment variable's is used: prefer it, as other users of the machine can read a command line. The password is never printed.",
            valueName: "url"))
    var url: String?

    @OptionGroup(title: "Shared cache options") var shared: SharedCacheOptions

    /// The store named (default `auto`).
    var store: StoreOption { storeOption ?? StoreOption(.auto) }

    /// The group's name: `--group`, else the shared cache's (`azure-cli`, `msal-file`, ...), else
    /// the default group.
    var group: String { groupName ?? (store.isShared ? store.name : CacheGroup.defaultName) }

    func validate() throws {
        if url != nil, storeOption?.kind != .postgres {
            throw ValidationError("--url names the database of --store postgres")
        }
        if storeOption?.kind == .postgres {
            guard url != nil else { throw ValidationError("--store postgres needs the database: --url postgres://...") }
            guard keySource != nil else {
                throw ValidationError(
                    "--store postgres needs the group's key, the same as the fleet's: --key-file or --passphrase-env")
            }
        }
        if passphraseEnvironment != nil, keyFile != nil {
            throw ValidationError("--passphrase-env and --key-file are alternatives; give one of them")
        }
        if let passphraseEnvironment, Console.environment(passphraseEnvironment) == nil {
            throw ValidationError("the environment variable \(passphraseEnvironment) named by --passphrase-env is not set")
        }
    }

    /// The key source the options give, if any.
    var keySource: CacheConfiguration.KeySource? {
        if let passphraseEnvironment { return .passphraseFromEnvironment(variable: passphraseEnvironment) }
        if let keyFile { return .keyFile(path: keyFile) }
        return nil
    }

    /// The library configuration these options describe.
    ///
    /// - Throws: `ValidationError` for options that do not fit the store (a key for a shared
    ///   cache, which cannot be sealed; `--path` for a keyring item), and
    ///   ``TokenCacheError/Code/invalidArgument`` when a preset's home folder is unknown.
    func configuration() throws -> CacheConfiguration { try configuration(for: store) }

    /// The configuration for `store`, with the options that fit it. With `strict` an option that
    /// does not fit is an error; ``MoveCommand``, which names two stores, checks them itself.
    func configuration(for store: StoreOption, strict: Bool = true) throws -> CacheConfiguration {
        guard let cache = try shared.cache(for: store, strict: strict) else {
            return CacheConfiguration(store: store.kind, directory: dir, keySource: keySource)
        }
        if strict, keySource != nil {
            throw ValidationError(
                "--store \(store.name) is another tool's cache, which cannot be sealed: --passphrase-env and --key-file are for the file store"
            )
        }
        var configuration = CacheConfiguration(sharedCache: cache)
        // The refresh locks of a shared cache live under the file-store root.
        configuration.directory = dir
        return configuration
    }

    /// Opens the group, creating it if it is new (for `import`). Throws `TokenCacheError` as
    /// ``CacheGroup/open(_:configuration:)`` does.
    func open() throws -> CacheGroup {
        if store.kind == .postgres { return try openInPostgres(configuration(), existing: false) }
        return try CacheGroup.open(group, configuration: configuration())
    }

    /// Opens a group that must already exist, with `configuration` (default: ``configuration()``):
    /// commands that only read or remove never create a group, a key file, a keyring item, a
    /// shared cache or its folder, or a database's tables, and a mistyped `--group` (or a tool
    /// that never signed in) is an error (exit 3), not an empty listing.
    func openExisting(_ configuration: CacheConfiguration? = nil) throws -> CacheGroup {
        let configuration = try configuration ?? self.configuration()
        if store.kind == .postgres { return try openInPostgres(configuration, existing: true) }
        return try Self.openExisting(group, configuration: configuration)
    }

    /// ``CacheGroup/openExisting(_:configuration:)``, with a message that names a shared cache's
    /// file or item rather than the file-store root.
    static func openExisting(_ group: String, configuration: CacheConfiguration) throws -> CacheGroup {
        guard let cache = configuration.sharedCache else {
            return try CacheGroup.openExisting(group, configuration: configuration)
        }
        do {
            return try CacheGroup.openExisting(group, configuration: configuration)
        } catch let error as TokenCacheError where error.code == .notFound {
            throw SharedCacheText.notFound(cache)
        }
    }

    /// The file store's root folder: `--dir`, else `$XDG_DATA_HOME/secure-token-cache`, else
    /// `~/.local/share/secure-token-cache` (the file store's own default).
    static func fileStoreRoot(_ directory: String?) -> String {
        if let directory { return directory }
        if let data = Console.environment("XDG_DATA_HOME"), data.hasPrefix("/") { return data + "/secure-token-cache" }
        return (Console.environment("HOME") ?? "") + "/.local/share/secure-token-cache"
    }
}

extension GlobalOptions {
    /// The long names of the options above that take a value.
    static let names: Set<String> = Set(["--group", "--store", "--dir", "--passphrase-env", "--key-file", "--url"])
        .union(SharedCacheOptions.valueNames)

    /// `arguments` with global options given before the command name moved after it, so
    /// `cachetool --store file status` means `cachetool status --store file` (argument-parser
    /// only gives a subcommand the options that follow its name).
    static func hoisted(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var position = 0
        while position < arguments.count {
            let argument = arguments[position]
            let name = String(argument.prefix { $0 != "=" })
            if SharedCacheOptions.flagNames.contains(argument) {
                leading.append(argument)
                position += 1
                continue
            }
            guard names.contains(name) else { break }
            leading.append(argument)
            if !argument.contains("="), position + 1 < arguments.count {
                leading.append(arguments[position + 1])
                position += 1
            }
            position += 1
        }
        guard !leading.isEmpty, position < arguments.count, !arguments[position].hasPrefix("-") else { return arguments }
        return [arguments[position]] + leading + arguments[(position + 1)...]
    }
}
