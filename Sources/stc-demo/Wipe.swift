import ArgumentParser
import SecureTokenCache

/// Removes an account for every app of the group.
struct Wipe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wipe", abstract: "Remove an account for every app of the group.")

    @OptionGroup var options: AppOptions

    @Option(help: "The user name.")
    var username = "alice@contoso.com"

    func run() async throws {
        let (cache, _) = try options.open()
        guard let account = try cache.account(username: username) else {
            options.say("the group has no account \(username)")
            return
        }
        let removed = try cache.group.wipe(account)
        options.say("wiped \(username) from the group for every app (\(removed) entries)")
    }
}
