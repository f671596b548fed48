import ArgumentParser
import SecureTokenCache

/// `cachetool`: inspect, clear, import and export SecureTokenCache groups.
@main
struct CacheTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cachetool",
        abstract: "Inspect, clear, import and export SecureTokenCache groups.",
        discussion: """
            A group is a named token cache shared by every app that opens it (the default, \
            \(CacheGroup.defaultName), is the one the Microsoft SDKs share). cachetool shows \
            what a group holds and what protects it, moves MSAL JSON caches in and out of it, \
            and clears it safely. Secrets are never printed unless you ask for them with \
            `show --reveal` or `export --include-secrets`; listings show a short fingerprint instead.

            Every command that reads a group takes --group, --store, --dir, --passphrase-env and \
            --key-file, before or after the command name. --store also opens the caches the \
            other Microsoft tools share (Azure CLI, azure-identity, Azure PowerShell): a preset \
            such as --store azure-cli, or --store msal-file --path FILE, or --store msal-keyring \
            --schema NAME --attribute KEY=VALUE; those caches are plaintext JSON or a keyring \
            item, never sealed, and `cachetool discover` lists the ones on this machine. Listings take --json for scripts: the JSON carries \
            the same rows and values as the table. Errors are one line on standard error, \
            "cachetool: error: <message>", and nothing is changed.

            EXAMPLES
              cachetool status
              cachetool list tokens --account alice@contoso.com
              cachetool list tokens --from ~/.azure/msal_token_cache.json
              cachetool import azure.json --store file --passphrase-env CACHE_PASS
              cachetool export backup.json --include-secrets
              cachetool clear --expired --yes
              cachetool doctor
              cachetool discover
              cachetool list tokens --store azure-cli
              cachetool move --from-store azure-cli --to-store auto --group com.example.azure

            EXIT STATUS
            \(ExitStatus.table)

            SHELL COMPLETION
              cachetool --generate-completion-script bash > ~/.cachetool.bash
              (also zsh and fish)

            See docs/cachetool.md for the full reference.
            """,
        subcommands: [
            StatusCommand.self, ListCommand.self, ShowCommand.self, ClearCommand.self, ImportCommand.self, ExportCommand.self,
            MoveCommand.self, DiscoverCommand.self, DoctorCommand.self,
        ]
    )

    /// Runs the command the arguments name, reporting every failure as one line on standard
    /// error with a documented exit code (argument-parser's own default for usage errors is 64;
    /// ours is 2, like most Unix tools).
    static func main() {
        let status: ExitStatus
        do {
            var command = try parseAsRoot(GlobalOptions.hoisted(Array(CommandLine.arguments.dropFirst())))
            try command.run()
            status = .ok
        } catch let failure as CommandFailure {
            status = report(failure)
        } catch let error as TokenCacheError {
            status = report(CommandFailure(error))
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                // --help, --version, --generate-completion-script.
                Console.out(fullMessage(for: error) + "\n")
                status = .ok
            } else if code == .validationFailure {
                let text = message(for: error).split(whereSeparator: \.isNewline).joined(separator: "; ")
                status = report(CommandFailure(.usage, "\(text) (see 'cachetool help')"))
            } else if let known = ExitStatus(rawValue: code.rawValue) {
                status = known
            } else {
                Console.error("cachetool: error: \(message(for: error))")
                exit(withError: ExitCode(code.rawValue))
            }
        }
        exit(withError: status == .ok ? nil : ExitCode(status.rawValue))
    }

    private static func report(_ failure: CommandFailure) -> ExitStatus {
        Console.error("cachetool: error: \(failure.message)")
        return failure.status
    }
}
