import ArgumentParser
import SecureTokenCache

/// `cachetool clear`: removes entries in one transaction, after saying what and asking.
struct ClearCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear",
        abstract: "Remove entries from a group.",
        discussion: """
            Give exactly one of:
              --all           every entry and every client's sign-in state
              --account X     everything of a user, for every client (X: home account id or username)
              --client ID     every entry of a client id (its tokens, a family refresh token it
                              obtained too, its app metadata) and its sign-in state
              --expired       every access token already expired
              --kind K        every app-only (app) or on-behalf-of (obo) access token; with
                              --client, only that client's
              --partition P   every entry of one partition (see `list partitions`): an app's
                              tokens in a tenant, one assertion's on-behalf-of tokens, or a user

            cachetool first lists what it will remove. On a terminal it then asks for \
            confirmation; --yes skips the question. When standard input is not a terminal and \
            --yes is missing it refuses (exit status 2) and changes nothing. Declining exits \
            with status 9. The removal is one transaction: all of it happens or none. It then \
            reports what it removed, which may differ from the list if another process wrote in \
            between. --dry-run lists and stops. An --account, --client or --partition that names \
            nothing in the group exits with status 3.

            EXAMPLES
              cachetool clear --expired --yes
              cachetool clear --account alice@contoso.com --dry-run
              cachetool clear --client 04b07795-8ddb-461a-bbee-02f9e1bf7b46
              cachetool clear --kind obo --client 66666666-aaaa-4bbb-8ccc-000000000006 --yes
              cachetool clear --partition 66666666-aaaa-4bbb-8ccc-000000000006_72f988bf-86f1-41af-91ab-2d7cd011db47_AppTokenCache
              cachetool clear --all --yes --json
              cachetool clear --all --yes --store azure-cli      (signs Azure CLI out)
            """
    )

    @Flag(help: "Remove everything.")
    var all = false

    @Option(help: ArgumentHelp("Remove everything of this account (home account id or username).", valueName: "id-or-username"))
    var account: String?

    @Option(help: ArgumentHelp("Remove every entry of this client id.", valueName: "id"))
    var client: String?

    @Flag(help: "Remove expired access tokens.")
    var expired = false

    @Option(help: ArgumentHelp("Remove the access tokens of this kind: app or obo.", valueName: "kind"))
    var kind: HolderOption?

    @Option(help: ArgumentHelp("Remove every entry of the partition with this key.", valueName: "key"))
    var partition: String?

    @Flag(help: "Show what would be removed, and remove nothing.")
    var dryRun = false

    @Flag(name: [.customShort("y"), .long], help: "Do not ask for confirmation.")
    var yes = false

    @Flag(help: "Print JSON: what was (or, with --dry-run, would be) removed.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        // --client narrows --kind; alone it is a selection of its own.
        let chosen = [all, account != nil, client != nil && kind == nil, expired, kind != nil, partition != nil].filter { $0 }
            .count
        guard chosen == 1 else {
            throw ValidationError("give exactly one of --all, --account, --client, --expired, --kind or --partition")
        }
        if kind == .user {
            throw ValidationError("--kind takes app or obo: a user's tokens are cleared with --account or --client")
        }
    }

    var selection: CacheGroup.ClearSelection {
        if let partition { return .partition(partition) }
        if let kind { return .accessTokens(of: kind.holder, clientId: client) }
        if let account { return .account(account) }
        if let client { return .client(client) }
        if expired { return .expiredAccessTokens }
        return .all
    }

    func run() throws {
        let configuration = try global.configuration()
        let group = try global.openExisting(configuration)
        let now = Console.now
        let planned = try group.entriesToClear(selection)
        if planned.isEmpty {
            if json {
                Console.line(JSONWriter.text(Self.report(removed: [], dryRun: dryRun, now: now), style: .pretty))
            } else {
                Console.line("Nothing to remove from group \(group.name).")
            }
            return
        }
        if dryRun {
            if json {
                Console.line(JSONWriter.text(Self.report(removed: planned, dryRun: true, now: now), style: .pretty))
            } else {
                Console.line("Would remove \(Self.count(planned)) from group \(group.name):")
                Console.out(Self.table(planned, now: now))
            }
            return
        }
        if !yes {
            guard Console.inputIsTerminal else {
                throw CommandFailure(
                    .usage,
                    "refusing to remove \(Self.count(planned)) without confirmation: standard input is not a terminal; pass --yes"
                )
            }
            Console.error("About to remove \(Self.count(planned)) from group \(group.name):")
            Console.write(2, Self.table(planned, now: now))
            guard Console.confirm("Remove them?") else {
                throw CommandFailure(.aborted, "nothing was removed")
            }
        }
        let removed = try group.clear(selection)
        if let shared = configuration.sharedCache, !removed.isEmpty {
            Console.note(
                "\(SharedCacheText.label(shared)) is the cache of \(SharedCacheText.toolName(shared)): what was removed is signed out of it there too"
            )
        }
        if json {
            Console.line(JSONWriter.text(Self.report(removed: removed, dryRun: false, now: now), style: .pretty))
        } else {
            Console.line("Removed \(Self.count(removed)) from group \(group.name)\(Self.breakdown(removed)).")
        }
    }

    static func count(_ entries: [GroupEntry]) -> String { entries.count == 1 ? "1 entry" : "\(entries.count) entries" }

    static func breakdown(_ entries: [GroupEntry]) -> String {
        let kinds = CredentialKind.allCases.sorted().compactMap { kind -> String? in
            let count = entries.filter { $0.kind == kind }.count
            return count == 0 ? nil : "\(count) \(kind.rawValue)"
        }
        return kinds.isEmpty ? "" : ": " + kinds.joined(separator: ", ")
    }

    static func table(_ entries: [GroupEntry], now: Int64) -> String {
        var table = Table(EntryView.entryHeaders)
        for entry in entries { table.append(EntryView(entry: entry, now: now).entryCells) }
        return table.render()
    }

    static func report(removed: [GroupEntry], dryRun: Bool, now: Int64) -> JSONValue {
        .object([
            "dryRun": .bool(dryRun),
            "removed": .integer(removed.count),
            "entries": .array(removed.map { EntryView(entry: $0, now: now).entryJSON }),
        ])
    }
}
