import ArgumentParser
import SecureTokenCache

/// Lists the accounts this app sees.
struct Accounts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "accounts", abstract: "List the accounts this app sees.")

    @OptionGroup var options: AppOptions

    func run() async throws {
        let (cache, _) = try options.open()
        let accounts = try cache.accounts()
        options.say(accounts.isEmpty ? "sees no account" : "sees " + accounts.map(\.username).joined(separator: ", "))
    }
}
