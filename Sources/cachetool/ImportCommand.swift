import ArgumentParser
import SecureTokenCache

/// The cache file formats cachetool reads and writes.
enum CacheFormat: String, ExpressibleByArgument, CaseIterable {
    /// The MSAL unified cache JSON every MSAL SDK writes (msal-python, MSAL.NET, MSAL4J, ...).
    case msalJSON = "msal-json"
}

/// `cachetool import FILE`: merges an MSAL JSON cache into the group in one transaction.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Merge an MSAL JSON cache file into a group.",
        discussion: """
            Reads an MSAL JSON token cache written by any MSAL SDK (for example Azure CLI's \
            ~/.azure/msal_token_cache.json, or a file from `cachetool export --include-secrets`) \
            and merges it into the group in one transaction: every entry keeps its key, and an \
            entry under a key the group already has is replaced. FILE may be - for standard input.

            A file that is not an MSAL JSON cache is rejected with exit status 8 and nothing is \
            imported. With --store memory the import lasts only as long as the command.

            EXAMPLES
              cachetool import ~/.azure/msal_token_cache.json
              cachetool import backup.json --store file --key-file ~/.config/tokens.key
            """
    )

    @Argument(help: ArgumentHelp("The MSAL JSON cache to import, or - for standard input.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("The file's format. Only msal-json today.", valueName: "format"))
    var format: CacheFormat = .msalJSON

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let bytes = try FileAccess.read(file)
        let group = try global.open()
        let count = try group.importMSAL(bytes)
        Console.line("Imported \(count) entries from \(file == "-" ? "standard input" : file) into group \(group.name).")
        if group.storeDescription.kind == .memory {
            Console.note("the memory store keeps nothing after cachetool exits")
        }
    }
}
