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
        let answer = try await URLSessionTransport.shared.post(url: authority.base + "/signin", form: form, timeout: .seconds(10))
        guard answer.status == 200 else { throw ValidationError("the authority's sign-in answered HTTP \(answer.status)") }
        let response = try TokenResponse(json: answer.body)
        let request = TokenRequest(
            clientId: options.client, authority: authority, scopes: ["User.Read"], grantType: "authorization_code")
        let token = try cache.store(response, for: request, signIn: true)
        options.say("signed in as \(username); access token fingerprint \(fingerprint(token.secret))")
    }
}
