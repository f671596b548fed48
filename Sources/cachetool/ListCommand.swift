import ArgumentParser
import SecureTokenCache

/// `cachetool list accounts|tokens|apps|partitions|all`: one row per entry (or partition),
/// secrets as fingerprints.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the accounts or tokens in a group.",
        discussion: """
            Prints one row per entry. `list accounts` shows the account entries (one per user \
            and tenant): username, home account id, environment, realm and authority type. \
            `list tokens` shows access, refresh and id tokens: kind, account username, client \
            id, realm, environment, scopes, time until expiry, FOCI family, and the secret as an \
            8-digit fingerprint (the secret itself is never printed; see `show --reveal`). An \
            app-only token (client credentials) has no account: its ACCOUNT is "(app)" \
            (`null` with --json). An on-behalf-of token, served only to the holder of the \
            user assertion it was redeemed from, shows "(obo)" before its user's name. \
            `list apps` shows the per-client app metadata; `list all` shows every entry. \
            `list partitions` shows one row per partition, named as MSAL.NET names its cache \
            keys: an app's app-only tokens in one tenant (<client>_<tenant>_AppTokenCache), \
            the on-behalf-of tokens of one user assertion (the assertion's hash), or a user \
            (the home account id), with how many entries, access and refresh tokens it holds \
            and when its last access token expires.

            The ID column names an entry for `cachetool show`. --client, --account, --kind and \
            --partition narrow the listing; --kind user, app or obo keeps a user's entries, \
            app-only access tokens or on-behalf-of access tokens (with tokens, partitions or \
            all); --partition keeps one partition's entries; --account takes a home account id \
            or a username, case-insensitively, \
            and fails with exit status 3 when the group has no such account. With --json the \
            output is a JSON array with one object per row, carrying the table's values under \
            the same names (plus the entry's MSAL key and absolute expiry).

            EXAMPLES
              cachetool list accounts
              cachetool list tokens --client 04b07795-8ddb-461a-bbee-02f9e1bf7b46
              cachetool list tokens --account alice@contoso.com --json | jq '.[].expiresIn'
              cachetool list tokens --from ~/.azure/msal_token_cache.json
              cachetool list tokens --kind obo --client 66666666-aaaa-4bbb-8ccc-000000000006
              cachetool list partitions --kind app
            """
    )

    enum Listing: String, ExpressibleByArgument, CaseIterable {
        case accounts, tokens, apps, partitions, all
    }

    @Argument(help: ArgumentHelp("What to list: accounts, tokens, apps, partitions or all.", valueName: "what"))
    var listing: Listing

    @Option(help: ArgumentHelp("Only entries of this client (application) id.", valueName: "id"))
    var client: String?

    @Option(help: ArgumentHelp("Only entries of this account: a home account id or a username.", valueName: "id-or-username"))
    var account: String?

    @Option(help: ArgumentHelp("Only tokens of this kind of holder: user, app or obo.", valueName: "kind"))
    var kind: HolderOption?

    @Option(help: ArgumentHelp("Only entries of the partition with this key.", valueName: "key"))
    var partition: String?

    @Flag(help: "Print a JSON array with the same rows.")
    var json = false

    func validate() throws {
        if kind != nil, listing == .accounts || listing == .apps {
            throw ValidationError("--kind narrows a listing of tokens, partitions or all, not of \(listing.rawValue)")
        }
        if partition != nil, listing == .apps || listing == .partitions {
            throw ValidationError("--partition narrows a listing of tokens, accounts or all, not of \(listing.rawValue)")
        }
        if listing == .partitions, client != nil || account != nil {
            throw ValidationError("list partitions takes --kind, not --client or --account")
        }
    }

    @OptionGroup var source: SourceOptions
    @OptionGroup var global: GlobalOptions

    func run() throws {
        let group = try source.open(global)
        let now = Console.now
        if listing == .partitions {
            try listPartitions(of: group, now: now)
            return
        }
        let entries: [GroupEntry]
        switch listing {
        case .accounts:
            var accounts = try group.entries(.init(kinds: [.account], account: account, partition: partition))
            if let client {
                // Accounts have no client id: keep those the client holds credentials for.
                let homes = Set(
                    try group.entries(.init(kinds: EntryView.tokenKinds, clientId: client, account: account)).compactMap(
                        \.homeAccountId))
                accounts.removeAll { !homes.contains($0.homeAccountId ?? HomeAccountId("")) }
            }
            entries = accounts
        case .tokens:
            entries = try group.entries(
                .init(kinds: EntryView.tokenKinds, clientId: client, account: account, partition: partition))
        case .apps, .partitions:
            entries = try group.entries(.init(kinds: [.appMetadata], clientId: client, account: account))
        case .all:
            entries = try group.entries(.init(clientId: client, account: account, partition: partition))
        }
        let views = entries.filter { kind == nil || $0.holder == kind?.holder }.map { EntryView(entry: $0, now: now) }
        if json {
            Console.line(
                JSONWriter.text(.array(views.map { listing == .accounts ? $0.accountJSON : $0.entryJSON }), style: .pretty))
            return
        }
        guard !views.isEmpty else {
            Console.note("no \(listing == .all ? "entries" : listing.rawValue) to list in \(source.describe(group))")
            return
        }
        var table = Table(listing == .accounts ? EntryView.accountHeaders : EntryView.entryHeaders)
        for view in views { table.append(listing == .accounts ? view.accountCells : view.entryCells) }
        Console.out(table.render())
    }

    /// `list partitions`: one row per partition of `group`, of holder ``kind`` when given.
    private func listPartitions(of group: CacheGroup, now: Int64) throws {
        let partitions = try group.partitions().filter { kind == nil || $0.partition.holder == kind?.holder }
        if json {
            Console.line(
                JSONWriter.text(
                    .array(
                        partitions.map { summary in
                            .object([
                                "kind": .string(summary.partition.holder.rawValue),
                                "key": .string(summary.partition.key),
                                "entries": .integer(summary.entryCount),
                                "accessTokens": .integer(summary.accessTokenCount),
                                "refreshTokens": .integer(summary.refreshTokenCount),
                                "latestExpiry": .optional(summary.latestExpiry),
                                "hasTokens": .bool(summary.hasTokens(at: now)),
                            ])
                        }), style: .pretty))
            return
        }
        guard !partitions.isEmpty else {
            Console.note("no partitions to list in \(source.describe(group))")
            return
        }
        var table = Table(["KIND", "PARTITION", "ENTRIES", "ACCESS", "REFRESH", "LAST EXPIRES IN"])
        for summary in partitions {
            table.append([
                summary.partition.holder.rawValue, summary.partition.key, "\(summary.entryCount)",
                "\(summary.accessTokenCount)", "\(summary.refreshTokenCount)",
                TimeText.expiresIn(summary.latestExpiry, now: now),
            ])
        }
        Console.out(table.render())
    }
}

/// `--kind`: whom tokens are for (``GroupEntry/Holder``), as the options spell it.
enum HolderOption: String, ExpressibleByArgument, CaseIterable {
    case user, app, obo

    var holder: GroupEntry.Holder {
        switch self {
        case .user: .user
        case .app: .app
        case .obo: .onBehalfOf
        }
    }
}
