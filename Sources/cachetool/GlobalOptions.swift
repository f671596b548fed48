import ArgumentParser
import SecureTokenCache

/// `--store`: the name of any store kind the library has.
struct StoreOption: ExpressibleByArgument {
    /// The kind named.
    var kind: StoreKind

    /// `kind` as an option value.
    init(_ kind: StoreKind) { self.kind = kind }

    init?(argument: String) {
        guard let kind = StoreKind.all.first(where: { $0.rawValue == argument }) else { return nil }
        self.kind = kind
    }

    static var allValueStrings: [String] { StoreKind.all.map(\.rawValue) }

    var defaultValueDescription: String { kind.rawValue }
}

/// The options every command that opens a group takes: which group, in which store, with
/// which key.
struct GlobalOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The cache group to open.", valueName: "name"))
    var group: String = CacheGroup.defaultName

    @Option(
        help: ArgumentHelp(
            "Where the group lives: auto, keyring, file or memory.",
            discussion:
                "auto uses the Secret Service when it is reachable and unlocked, else the file store. memory keeps nothing after cachetool exits.",
            valueName: "store"))
    var store = StoreOption(.auto)

    @Option(
        help: ArgumentHelp(
            "The root folder of file-store groups (default: $XDG_DATA_HOME/secure-token-cache).", valueName: "path"))
    var dir: String?

    @Option(
        name: .customLong("passphrase-env"),
        help: ArgumentHelp("Read the file store's passphrase from this environment variable.", valueName: "var"))
    var passphraseEnvironment: String?

    @Option(
        name: .customLong("key-file"),
        help: ArgumentHelp("Use this key file (32 bytes, 0600) for the file store.", valueName: "path"))
    var keyFile: String?

    func validate() throws {
        if passphraseEnvironment != nil, keyFile != nil {
            throw ValidationError("--passphrase-env and --key-file are alternatives; give one of them")
        }
        if let passphraseEnvironment, Console.environment(passphraseEnvironment) == nil {
            throw ValidationError("the environment variable \(passphraseEnvironment) named by --passphrase-env is not set")
        }
    }

    /// The library configuration these options describe.
    var configuration: CacheConfiguration {
        var keySource: CacheConfiguration.KeySource?
        if let passphraseEnvironment { keySource = .passphraseFromEnvironment(variable: passphraseEnvironment) }
        if let keyFile { keySource = .keyFile(path: keyFile) }
        return CacheConfiguration(store: store.kind, directory: dir, keySource: keySource)
    }

    /// Opens the group, creating it if it is new (for `import`). Throws `TokenCacheError` as
    /// ``CacheGroup/open(_:configuration:)`` does.
    func open() throws -> CacheGroup {
        try CacheGroup.open(group, configuration: configuration)
    }

    /// Opens a group that must already exist: commands that only read or remove never create
    /// a group, a key file or a keyring item, and a mistyped `--group` is an error (exit 3), not an
    /// empty listing.
    func openExisting() throws -> CacheGroup {
        try CacheGroup.openExisting(group, configuration: configuration)
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
    static let names: Set<String> = ["--group", "--store", "--dir", "--passphrase-env", "--key-file"]

    /// `arguments` with global options given before the command name moved after it, so
    /// `cachetool --store file status` means `cachetool status --store file` (argument-parser
    /// only gives a subcommand the options that follow its name).
    static func hoisted(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var position = 0
        while position < arguments.count {
            let argument = arguments[position]
            let name = String(argument.prefix { $0 != "=" })
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
