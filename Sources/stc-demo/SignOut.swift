import ArgumentParser
import SecureTokenCache

/// Signs this app out of an account; the family's other apps keep their single sign-on.
struct SignOut: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sign-out", abstract: "Sign this app out of an account.")

    @OptionGroup var options: AppOptions

    @Option(help: "The user name (default: every account this app sees).")
    var username: String?

    func run() async throws {
        let (cache, _) = try options.open()
        let accounts = try username.map { try cache.account(username: $0).map { [$0] } ?? [] } ?? cache.accounts()
        for account in accounts {
            try cache.signOut(account)
            options.say("signed out of \(account.username)")
        }
        if accounts.isEmpty { options.say("no account to sign out of") }
    }
}
