import ArgumentParser
import SecureTokenCache

/// `--encoding`: ``MSALSharedCache/Encoding`` as an option value.
enum EncodingOption: String, ExpressibleByArgument, CaseIterable {
    case raw, base64

    var encoding: MSALSharedCache.Encoding { self == .raw ? .raw : .base64 }
}

/// The options that say where another tool's shared MSAL cache is (``MSALSharedCache``): the
/// file of `--store msal-file`, the keyring item of `--store msal-keyring`, and the lock file of
/// either or of a preset (`--store azure-cli`, ...).
struct SharedCacheOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The MSAL JSON file of --store msal-file.", valueName: "path"))
    var path: String?

    @Option(
        name: .customLong("lock-file"),
        help: ArgumentHelp(
            "The lock file the tools sharing the cache take (default: the cache's file, or the keyring item's signal file, with .lockfile appended).",
            valueName: "path"))
    var lockFile: String?

    @Option(help: ArgumentHelp("The libsecret schema name of --store msal-keyring.", valueName: "name"))
    var schema: String?

    @Option(
        name: .customLong("attribute"),
        help: ArgumentHelp("An attribute of the keyring item (repeat for each; at least one).", valueName: "key=value"))
    var attributes: [String] = []

    @Option(help: ArgumentHelp("The keyring item's label (default: MSALCache).", valueName: "label"))
    var label: String?

    @Option(help: ArgumentHelp("The keyring collection alias or path (default: default).", valueName: "collection"))
    var collection: String?

    @Option(
        help: ArgumentHelp(
            "How the document is held in the keyring item: raw (Python, Node) or base64 (.NET, Java, Go); default raw.",
            valueName: "encoding"))
    var encoding: EncodingOption?

    @Option(
        name: .customLong("signal-file"),
        help: ArgumentHelp(
            "The file the tools touch after writing the keyring item (default: ~/.IdentityService/<schema>, as azure-identity names it).",
            valueName: "path"))
    var signalFile: String?

    @Flag(
        inversion: .prefixedNo,
        help: "Whether keyring lookups match the schema name too (default yes; the .NET, Java and Go extensions do not).")
    var matchSchemaName: Bool?

    /// The long names of the options above that take a value, for ``GlobalOptions/hoisted(_:)``.
    static let valueNames: Set<String> = [
        "--path", "--lock-file", "--schema", "--attribute", "--label", "--collection", "--encoding", "--signal-file",
    ]
    /// The long names of the flags above.
    static let flagNames: Set<String> = ["--match-schema-name", "--no-match-schema-name"]

    /// The keyring options given, by name, for messages about options that do not apply.
    var keyringOptionsGiven: [String] {
        [
            schema.map { _ in "--schema" }, attributes.isEmpty ? nil : "--attribute", label.map { _ in "--label" },
            collection.map { _ in "--collection" }, encoding.map { _ in "--encoding" }, signalFile.map { _ in "--signal-file" },
            matchSchemaName.map { $0 ? "--match-schema-name" : "--no-match-schema-name" },
        ].compactMap { $0 }
    }

    /// Every option given, by name.
    var given: [String] {
        [path.map { _ in "--path" }, lockFile.map { _ in "--lock-file" }].compactMap { $0 } + keyringOptionsGiven
    }

    /// The shared cache `store` names with these options, or `nil` for the library's own stores.
    /// With `strict` (one store named), an option that does not fit the store is an error;
    /// without (``MoveCommand`` names two), the caller checks that the options fit one side.
    ///
    /// - Throws: `ValidationError` for options that do not fit the store, and
    ///   ``TokenCacheError/Code/invalidArgument`` when the home folder is unknown.
    func cache(for store: StoreOption, strict: Bool = true) throws -> MSALSharedCache? {
        if store.isPreset {
            if strict, let wrong = (given.filter { $0 != "--lock-file" }).first {
                throw ValidationError(
                    "\(wrong) is for --store msal-file or msal-keyring; the \(store.name) preset knows where its cache is")
            }
            guard var cache = try MSALSharedCache.preset(named: store.name) else { return nil }
            if let lockFile { cache.lockFile = FileAccess.absolute(lockFile) }
            return cache
        }
        switch store.kind {
        case .msalFile:
            if let wrong = keyringOptionsGiven.first {
                throw ValidationError("\(wrong) is for --store msal-keyring, not msal-file")
            }
            guard let path else { throw ValidationError("--store msal-file needs --path, the MSAL JSON file to open") }
            return .file(path: FileAccess.absolute(path), lockFile: lockFile.map(FileAccess.absolute))
        case .msalKeyring:
            if path != nil { throw ValidationError("--path is for --store msal-file; a keyring item's file is --signal-file") }
            return .keyring(try keyringItem(), lockFile: lockFile.map(FileAccess.absolute))
        default:
            if strict, let wrong = given.first {
                throw ValidationError(
                    "\(wrong) is for the shared caches (--store msal-file, msal-keyring or a preset), not --store \(store.name)")
            }
            return nil
        }
    }

    private func keyringItem() throws -> MSALSharedCache.KeyringItem {
        guard let schema, !schema.isEmpty else {
            throw ValidationError("--store msal-keyring needs --schema, the libsecret schema name the tools store the item under")
        }
        guard !attributes.isEmpty else {
            // Without an attribute a lookup would match any item of the schema (or, unmatched by
            // name, any item at all).
            throw ValidationError("--store msal-keyring needs at least one --attribute key=value that names the item")
        }
        var pairs: [String: String] = [:]
        for attribute in attributes {
            guard let equals = attribute.firstIndex(of: "="), equals != attribute.startIndex else {
                throw ValidationError("--attribute takes key=value, not '\(attribute)'")
            }
            pairs[String(attribute[..<equals])] = String(attribute[attribute.index(after: equals)...])
        }
        let signal: String
        if let signalFile {
            signal = FileAccess.absolute(signalFile)
        } else {
            guard let home = Console.environment("HOME"), home.hasPrefix("/") else {
                throw ValidationError("HOME is not set, so there is no default --signal-file; give one")
            }
            signal = home + "/.IdentityService/" + schema
        }
        return MSALSharedCache.KeyringItem(
            schema: schema, attributes: pairs, label: label ?? "MSALCache", collection: collection ?? "default",
            encoding: encoding?.encoding ?? .raw, matchesSchemaName: matchSchemaName ?? true, signalFile: signal)
    }
}
