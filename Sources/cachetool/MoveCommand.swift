import ArgumentParser
import SecureTokenCache

/// `cachetool move`: every entry of a group from one store to another, then the source emptied
/// (``CacheGroup/move(_:from:to:)``): for example Azure CLI's plaintext cache into a sealed group.
struct MoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move",
        abstract: "Move every entry from one store to another, then empty the source.",
        discussion: """
            Copies every entry (tokens, accounts, app metadata, each client's sign-in state, \
            the sections other tools added) from --from-store to --to-store, reads the copy back \
            and compares it, and only then empties the source, all under the source's lock: \
            nothing is lost, and no write of another process slips in between. The destination \
            must hold nothing yet.

            Either side may be the file or keyring store (auto for the destination picks as \
            every command does, and for the source finds where the group is), or another \
            tool's shared cache: a preset (azure-cli, azure-identity, azure-identity-file, \
            azure-identity-dotnet) or msal-file/msal-keyring with their options (--path, \
            --schema, ...; only one side may be described that way, and --lock-file is the \
            shared side's). --passphrase-env and --key-file are the file store's.

            What it does to the other tools: moving out of a shared cache empties it, which \
            signs that tool out (Azure CLI asks you to `az login` again); the tokens keep \
            working for the apps that open the destination group. Moving into a shared cache \
            signs that tool in with the group's accounts, and the tokens are then no longer \
            sealed. To copy without emptying anything, use `cachetool export - --include-secrets \
            ... | cachetool import - ...` instead.

            On a terminal move asks first; --yes skips the question, and without a terminal \
            it is required.

            EXAMPLES
              cachetool move --from-store azure-cli --to-store auto --group com.example.azure
              cachetool move --from-store azure-cli --to-store file --passphrase-env PASS --yes
              cachetool move --from-store file --to-store msal-file --path ./cache.json --yes
            """
    )

    @Option(
        name: .customLong("from-store"),
        help: ArgumentHelp("Where the entries are now: a store kind or a shared-cache preset.", valueName: "store"))
    var fromStore: StoreOption

    @Option(
        name: .customLong("to-store"),
        help: ArgumentHelp("Where they go (default auto: the keyring when usable, else the file store).", valueName: "store"))
    var toStore = StoreOption(.auto)

    @Flag(name: [.customShort("y"), .long], help: "Do not ask for confirmation.")
    var yes = false

    @Flag(help: "Print JSON: what was moved, from where, to where.")
    var json = false

    @OptionGroup var global: GlobalOptions

    /// The two sides, as the options describe them.
    var sides: [StoreOption] { [fromStore, toStore] }

    func validate() throws {
        if global.storeOption != nil { throw ValidationError("move takes --from-store and --to-store, not --store") }
        let custom = sides.filter { !$0.isPreset && ($0.kind == .msalFile || $0.kind == .msalKeyring) }
        if custom.count == 2 {
            throw ValidationError(
                "only one side may be an msal-file or msal-keyring described by options; name the other by a preset, or copy with export | import"
            )
        }
        if let side = custom.first {
            _ = try global.shared.cache(for: side)
        } else if let wrong = (global.shared.given.filter { $0 != "--lock-file" }).first {
            throw ValidationError("\(wrong) describes an msal-file or msal-keyring side, and neither side is one")
        }
        let shared = sides.filter(\.isShared)
        if global.shared.lockFile != nil, shared.count != 1 {
            throw ValidationError("--lock-file is the shared cache's, so exactly one side must be a shared cache")
        }
        if global.keySource != nil, shared.count == 2 {
            throw ValidationError("--passphrase-env and --key-file are for the file store, and both sides are shared caches")
        }
    }

    func run() throws {
        let group = global.group
        let from = try resolvedSource(try global.configuration(for: fromStore, strict: false))
        let source = try GlobalOptions.openExisting(group, configuration: from)
        let statistics = try source.statistics()
        let count = statistics.countByKind.values.reduce(0, +)
        let to = try resolvedDestination(try global.configuration(for: toStore, strict: false))
        let fromText = Self.describe(source.storeDescription, from, group: group)
        guard count > 0 else {
            Console.line("Nothing to move: \(fromText) holds no entries.")
            return
        }
        if let existing = try? GlobalOptions.openExisting(group, configuration: to),
            try existing.statistics().countByKind.values.reduce(0, +) > 0
        {
            throw CommandFailure(
                .usage,
                "the destination, \(Self.describe(existing.storeDescription, to, group: group)), already holds entries; nothing was moved. Choose another --group, or merge with `cachetool export - --include-secrets ... | cachetool import - ...`"
            )
        }
        let consequences = Self.consequences(from: from, to: to)
        if !yes {
            guard Console.inputIsTerminal else {
                throw CommandFailure(
                    .usage,
                    "refusing to move \(count == 1 ? "1 entry" : "\(count) entries") without confirmation: standard input is not a terminal; pass --yes"
                )
            }
            Console.error("About to move \(count) entries from \(fromText) to \(to.store.rawValue).")
            for line in consequences { Console.error(line) }
            guard Console.confirm("Move them?") else { throw CommandFailure(.aborted, "nothing was moved") }
        }
        let records = try CacheGroup.move(group, from: from, to: to)
        let destination = try GlobalOptions.openExisting(group, configuration: to)
        let toText = Self.describe(destination.storeDescription, to, group: group)
        if json {
            Console.line(
                JSONWriter.text(
                    .object([
                        "entries": .integer(count),
                        "records": .integer(records),
                        "from": Self.json(source.storeDescription, from),
                        "to": Self.json(destination.storeDescription, to),
                        "consequences": .array(consequences.map(JSONValue.string)),
                    ]), style: .pretty))
        } else {
            Console.line("Moved \(count) entries from \(fromText) to \(toText).")
            for line in consequences { Console.line(line) }
        }
    }

    /// The source configuration, with `auto` replaced by the store the group is in.
    func resolvedSource(_ configuration: CacheConfiguration) throws -> CacheConfiguration {
        guard configuration.store == .auto else { return configuration }
        var resolved = configuration
        resolved.store = try GlobalOptions.openExisting(global.group, configuration: configuration).storeDescription.kind
        return resolved
    }

    /// The destination configuration, with `auto` replaced by the store `auto` opens the group
    /// in: where it is already, else the keyring when it is usable, else the file store.
    func resolvedDestination(_ configuration: CacheConfiguration) throws -> CacheConfiguration {
        guard configuration.store == .auto else { return configuration }
        var resolved = configuration
        if let existing = try? GlobalOptions.openExisting(global.group, configuration: configuration) {
            resolved.store = existing.storeDescription.kind
        } else {
            resolved.store = (try? CacheGroup.checkSecretService(configuration: configuration)) != nil ? .keyring : .file
        }
        return resolved
    }

    /// One side, for messages: the shared cache, or the group and its store.
    static func describe(_ store: StoreDescription, _ configuration: CacheConfiguration, group: String) -> String {
        if let shared = configuration.sharedCache { return shared.description }
        return "group \(group) in the \(store.kind.rawValue) store (\(store.protection.description))"
    }

    static func json(_ store: StoreDescription, _ configuration: CacheConfiguration) -> JSONValue {
        .object([
            "store": .string(store.kind.rawValue),
            "sharedCache": .optional(configuration.sharedCache?.name),
            "location": .string(store.location),
            "protection": .string(store.protection.rawValue),
        ])
    }

    /// What the move does to the other tools' sign-in and to the tokens' protection.
    static func consequences(from: CacheConfiguration, to: CacheConfiguration) -> [String] {
        var lines: [String] = []
        if let shared = from.sharedCache {
            lines.append(
                "\(SharedCacheText.label(shared)) is left empty: \(SharedCacheText.toolName(shared)) is signed out and will ask you to sign in again."
            )
        }
        if let shared = to.sharedCache {
            lines.append(
                "The tokens are now in \(SharedCacheText.label(shared)), where \(SharedCacheText.toolName(shared)) signs in with them; they are not sealed there."
            )
        }
        return lines
    }
}
