import ArgumentParser
import SecureTokenCache

/// Signs a user in, as an interactive (browser) sign-in would end: the authority's token
/// response is stored and the account becomes this app's current one.
struct SignIn: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-in", abstract: "Sign a user in (the fake authority's /signin stands in for the browser).")

    @OptionGroup var options: AppOptions

    @Option(help: "The user name.")
    var username = "alice@contoso.com"

    @Option(help: "The access token's lifetime in seconds (below 300 it counts as expired at once).")
    var expiresIn: Int?

    func run() async throws {
        let (cache, authority) = try options.open()
        var form: [(name: String, value: String)] = [
            ("client_id", options.client), ("username", username), ("scope", "User.Read openid profile offline_access"),
        ]
        if let expiresIn { form.append(("expires_in", String(expiresIn))) }
        let answer = try await URLSessionTransport.shared.post(url: authority.base + "/signin", form: form, timeout: 10)
        guard answer.status == 200 else { throw ValidationError("the authority's sign-in answered HTTP \(answer.status)") }
        let response = try TokenResponse(json: answer.body)
        let request = TokenRequest(
            clientId: options.client, authority: authority, scopes: ["User.Read"], grantType: "authorization_code")
        let token = try cache.store(response, for: request, signIn: true)
        options.say("signed in as \(username); access token fingerprint \(fingerprint(token.secret))")
    }
}

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
