import ArgumentParser
import SecureTokenCache

/// The whole single sign-on story in one process, two apps over one in-memory group: what the
/// multi-process demo shows, for builds without a durable store.
struct Walkthrough: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "walkthrough",
        abstract: "Sign in in app A, token silently in app B, sign A out, B still works (one process).")

    @Option(help: "The authority, such as http://127.0.0.1:8400/common.")
    var authority: String

    @Option(help: "App A's client id.")
    var clientA: String

    @Option(help: "App B's client id (same family as A).")
    var clientB: String

    func run() async throws {
        let group = CacheGroup(inMemory: "com.example.stc-demo")
        let a = try AppOptions.parse(["--authority", authority, "--client", clientA, "--store", "memory"])
        let b = try AppOptions.parse(["--authority", authority, "--client", clientB, "--store", "memory"])
        let authority = try Authority(self.authority)
        let appA = try TokenCache(clientId: clientA, group: group)
        let appB = try TokenCache(clientId: clientB, group: group)

        let answer = try await URLSessionTransport.shared.post(
            url: authority.base + "/signin", form: [("client_id", clientA), ("username", "alice@contoso.com")],
            timeout: .seconds(10))
        try appA.store(
            try TokenResponse(json: answer.body),
            for: TokenRequest(clientId: clientA, authority: authority, scopes: ["User.Read"], grantType: "authorization_code"))
        a.say("signed in as alice@contoso.com")

        let account = try await reportingInteraction(b) { () async throws -> Account in
            guard let found = try appB.accounts().first else {
                throw TokenCacheError(.interactionRequired, "app B sees no account")
            }
            return found
        }
        b.say("sees \(account.username) without signing in")
        let first = try await appB.acquireTokenSilently(scopes: ["User.Read"], account: account, authority: authority)
        b.say(
            "got a token \(first.isFromCache ? "from the cache" : "from the authority, with A's family refresh token"); fingerprint \(fingerprint(first.accessToken))"
        )

        try appA.signOut(account)
        a.say("signed out; it now sees \(try appA.accounts().count) accounts")
        let again = try await appB.acquireTokenSilently(
            scopes: ["User.Read"], account: account, authority: authority, forceRefresh: true)
        b.say(
            "still works after A's sign-out: fresh token \(again.isFromCache ? "from the cache" : "from the authority"); fingerprint \(fingerprint(again.accessToken))"
        )
    }
}
