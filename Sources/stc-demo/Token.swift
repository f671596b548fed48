import ArgumentParser
import SecureTokenCache

/// Gets an access token without interaction: from the cache, or by a silent refresh.
struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "token", abstract: "Get an access token silently.")

    @OptionGroup var options: AppOptions

    @Option(help: "The user name (default: the first account this app sees).")
    var username: String?

    @Option(help: "A scope to ask for (repeatable).")
    var scope: [String] = ["User.Read"]

    @Flag(help: "Skip the cached access token.")
    var forceRefresh = false

    func run() async throws {
        let (cache, authority) = try options.open()
        let account = try await reportingInteraction(options) { () async throws -> Account in
            let found = try username.map { try cache.account(username: $0) } ?? cache.accounts().first
            guard let found else {
                throw TokenCacheError(.interactionRequired, "this app sees no signed-in account; sign in first")
            }
            return found
        }
        let result = try await reportingInteraction(options) {
            try await cache.acquireTokenSilently(
                scopes: Scopes(scope), account: account, authority: authority, forceRefresh: forceRefresh)
        }
        options.say(
            "got a token for \(account.username) \(result.isFromCache ? "from the cache" : "from the authority (silent refresh)"); fingerprint \(fingerprint(result.accessToken))"
        )
    }
}
