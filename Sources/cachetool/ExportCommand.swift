import ArgumentParser
import SecureTokenCache

/// `cachetool export FILE|-`: the group as an MSAL JSON cache, secrets left out unless asked.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a group as an MSAL JSON cache file.",
        discussion: """
            Writes the group as an MSAL JSON cache that msal-python (and the other MSAL SDKs) \
            can load: byte for byte what msal-python 1.39.0 writes for the same cache. FILE may \
            be - for standard output.

            Without --include-secrets every secret (access, refresh and id token) is left out \
            and a note on standard error says so: the file shows what is cached without exposing \
            a token. With it, the file holds live credentials: keep it like a password.

            The file is created with mode 0600, written completely and flushed to disk before it \
            appears under its name. An existing file is never overwritten unless --force is \
            given; then it is replaced in one step (a symbolic link is replaced, not followed).

            EXAMPLES
              cachetool export - | jq '.AccessToken | length'
              cachetool export backup.json --include-secrets
              cachetool export ~/.azure/msal_token_cache.json --include-secrets --force
            """
    )

    @Argument(help: ArgumentHelp("Where to write: a file, or - for standard output.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("The file's format. Only msal-json (adal-json is import only).", valueName: "format"))
    var format: CacheFormat = .msalJSON

    @Flag(help: "Include the secrets (the tokens themselves).")
    var includeSecrets = false

    @Flag(help: "Replace FILE if it exists.")
    var force = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        // Migration is one way: MSAL SDKs read the unified cache, and ADAL is retired.
        guard format == .msalJSON else { throw ValidationError("export writes msal-json only; adal-json is an import format") }
    }

    func run() throws {
        let group = try global.openExisting()
        let bytes = try group.exportMSAL(includeSecrets: includeSecrets)
        try FileAccess.write(bytes, to: file, replace: force)
        if file != "-" { Console.note("wrote \(bytes.count) bytes to \(file) (mode 0600)") }
        if !includeSecrets {
            Console.note("secrets were left out; pass --include-secrets to export the tokens themselves")
        }
    }
}
