import ArgumentParser
import SecureTokenCache

/// `cachetool list accounts|tokens|apps|all`: one row per entry, secrets as fingerprints.
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
            `list apps` shows the per-client app metadata; `list all` shows every entry.

            The ID column names an entry for `cachetool show`. --client, --account and --kind \
            narrow the listing; --kind user, app or obo keeps a user's entries, app-only access \
            tokens or on-behalf-of access tokens (with tokens or all); --account takes a home account id or a username, case-insensitively, \
            and fails with exit status 3 when the group has no such account. With --json the \
            output is a JSON array with one object per row, carrying the table's values under \
            the same names (plus the entry's MSAL key and absolute expiry).

            EXAMPLES
              cachetool list accounts
              cachetool list tokens --client 04b07795-8ddb-461a-bbee-02f9e1bf7b46
              cachetool list tokens --account alice@contoso.com --json | jq '.[].expiresIn'
              cachetool list tokens --from ~/.azure/msal_token_cache.json
              cachetool list tokens --kind obo --client 66666666-aaaa-4bbb-8ccc-000000000006
            """
    )

    enum Listing: String, ExpressibleByArgument, CaseIterable {
        case accounts, tokens, apps, all
    }

    @Argument(help: ArgumentHelp("What to list: accounts, tokens, apps or all.", valueName: "what"))
    var listing: Listing

    @Option(help: ArgumentHelp("Only entries of this client (application) id.", valueName: "id"))
    var client: String?

    @Option(help: ArgumentHelp("Only entries of this account: a home account id or a username.", valueName: "id-or-username"))
    var account: String?

    @Option(help: ArgumentHelp("Only tokens of this kind of holder: user, app or obo.", valueName: "kind"))
    var kind: HolderOption?

    @Flag(help: "Print a JSON array with the same rows.")
    var json = false

    func validate() throws {
        if kind != nil, listing == .accounts || listing == .apps {
            throw ValidationError("--kind narrows a listing of tokens or all, not of \(listing.rawValue)")
        }
    }

    @OptionGroup var source: SourceOptions
    @OptionGroup var global: GlobalOptions

    func run() throws {
        let group = try source.open(global)
        let now = Console.now
        let entries: [GroupEntry]
        switch listing {
        case .accounts:
            var accounts = try group.entries(.init(kinds: [.account], account: account))
            if let client {
                // Accounts have no client id: keep those the client holds credentials for.
                let homes = Set(
                    try group.entries(.init(kinds: EntryView.tokenKinds, clientId: client, account: account)).compactMap(
                        \.homeAccountId))
                accounts.removeAll { !homes.contains($0.homeAccountId ?? HomeAccountId("")) }
            }
            entries = accounts
        case .tokens:
            entries = try group.entries(.init(kinds: EntryView.tokenKinds, clientId: client, account: account))
        case .apps:
            entries = try group.entries(.init(kinds: [.appMetadata], clientId: client, account: account))
        case .all:
            entries = try group.entries(.init(clientId: client, account: account))
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
