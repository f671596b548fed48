import ArgumentParser
import SecureTokenCache

/// The cache file formats cachetool reads and writes.
enum CacheFormat: String, ExpressibleByArgument, CaseIterable {
    /// The MSAL unified cache JSON every MSAL SDK writes (msal-python, MSAL.NET, MSAL4J, ...).
    case msalJSON = "msal-json"
    /// ADAL for Python's token cache: a JSON list of entries (Azure CLI's old
    /// ~/.azure/accessTokens.json). Import only.
    case adalJSON = "adal-json"
}

/// `cachetool import FILE`: merges an MSAL JSON cache (or migrates an ADAL for Python cache)
/// into the group in one transaction.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Merge an MSAL JSON cache file (or migrate an ADAL cache) into a group.",
        discussion: """
            Reads an MSAL JSON token cache written by any MSAL SDK (for example Azure CLI's \
            ~/.azure/msal_token_cache.json, or a file from `cachetool export --include-secrets`) \
            and merges it into the group in one transaction: every entry keeps its key, and an \
            entry under a key the group already has is replaced. FILE may be - for standard input.

            With --format adal-json FILE is an ADAL for Python cache (Azure CLI's old \
            ~/.azure/accessTokens.json): its refresh tokens become refresh tokens of legacy \
            accounts that `account(username:)` finds and the first silent acquisition turns into \
            full accounts; its still-valid access tokens become tokens for <resource>/.default.

            A file that is not a cache of the given format is rejected with exit status 8 and nothing is \
            imported. With --store memory the import lasts only as long as the command.

            EXAMPLES
              cachetool import ~/.azure/msal_token_cache.json
              cachetool import backup.json --store file --key-file ~/.config/tokens.key
              cachetool import --format adal-json ~/.azure/accessTokens.json
            """
    )

    @Argument(help: ArgumentHelp("The MSAL JSON cache to import, or - for standard input.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("The file's format: msal-json (the default) or adal-json.", valueName: "format"))
    var format: CacheFormat = .msalJSON

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let bytes = try FileAccess.read(file)
        // The file is read and checked before the group is opened: opening may make it (its
        // folder and key, a keyring item, a database's tables), which a file that is no cache
        // must not leave behind. An ADAL cache is small: migrated once to check it, then again.
        var checked: CacheGroup.CheckedMSALDocument? = nil
        switch format {
        case .msalJSON: checked = try CacheGroup.CheckedMSALDocument(bytes)
        case .adalJSON: try CacheGroup(inMemory: "adal-check").importADAL(bytes)
        }
        let group = try global.open()
        let count = try checked.map(group.importMSAL) ?? group.importADAL(bytes)
        Console.line("Imported \(count) entries from \(file == "-" ? "standard input" : file) into group \(group.name).")
        if group.storeDescription.kind == .memory {
            Console.note("the memory store keeps nothing after cachetool exits")
        }
        if let shared = try global.configuration().sharedCache {
            Console.note(
                "the tokens are now in \(SharedCacheText.label(shared)), the cache of \(SharedCacheText.toolName(shared)), which cannot be sealed: \(group.storeDescription.protection.description)"
            )
        }
    }
}
