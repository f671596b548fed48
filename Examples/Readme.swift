import SecureTokenCache

/// README.md, the quick start for a desktop app or a command-line tool.
func readme(responseBytes: [UInt8]) throws {
    let group = try CacheGroup.open()  // com.microsoft.identity.universalstorage
    let cache = try TokenCache(clientId: "11111111-aaaa-4bbb-8ccc-000000000001", group: group)

    // After an interactive sign-in, store what the token endpoint answered:
    let request = TokenRequest(
        clientId: cache.clientId,
        authority: try Authority("https://login.microsoftonline.com/common"),
        scopes: ["User.Read"], grantType: "authorization_code")
    try cache.store(try TokenResponse(json: responseBytes), for: request)

    // Later, in this process or any other process that opens the group:
    for account in try cache.accounts() {
        if let cached = try cache.accessToken(for: ["User.Read"], account: account) {
            use(cached.token.secret)
        }
    }
}

/// README.md, the same quick start: silent acquisition.
func readmeSilent(cache: TokenCache, account: Account) async throws {
    let result = try await cache.acquireTokenSilently(
        scopes: ["User.Read"], account: account,
        authority: try Authority("https://login.microsoftonline.com/common"))
    // Throws TokenCacheError .interactionRequired (with the server's error, suberror and
    // correlation id) when the user must sign in again.
    use(result.accessToken)
}

/// README.md, the quick start for a service or a daemon without a keyring.
func readmeServer() async throws {
    // No desktop session, so no Secret Service: the encrypted file store, with its key in a
    // 0600 key file kept apart from the data (made with the group if it does not exist yet).
    let configuration = CacheConfiguration(
        store: .file, directory: "/var/lib/contoso/tokens",
        keySource: .keyFile(path: "/etc/contoso/token-cache.key"))
    // Or a passphrase that the service manager puts in the environment, stretched with Argon2id:
    // keySource: .passphraseFromEnvironment(variable: "CONTOSO_CACHE_PASSPHRASE")
    let group = try CacheGroup.open("com.contoso.daemon", configuration: configuration)
    let cache = try TokenCache(clientId: "11111111-aaaa-4bbb-8ccc-000000000001", group: group)

    // The user signed in once (with the device-code flow, or a `cachetool import`); every run after:
    guard let account = try cache.accounts().first else { return }
    let result = try await cache.acquireTokenSilently(scopes: ["User.Read"], account: account)
    send(authorization: "\(result.tokenType) \(result.accessToken)")
}

/// README.md, "Sharing sign-in with Azure CLI and the Azure SDKs": the same code as
/// ``sharingWithAzureCLI()``, which the article shows.
func readmeAzureCLI() throws {
    try sharingWithAzureCLI()
}

/// README.md, "Server apps": a web API's own token and a token on behalf of its caller.
func readmeServerApps(configuration: CacheConfiguration, clientSecret: String, incomingBearerToken: String) async throws {
    let group = try CacheGroup.open("com.contoso.web-api", configuration: configuration)
    let cache = try TokenCache(clientId: "66666666-aaaa-4bbb-8ccc-000000000006", group: group)
    let client = ConfidentialClient(cache: cache, credentialKind: .secret)
    let tenant = try Authority("https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47")

    // The web API's own token for Microsoft Graph.
    let graph = try await client.acquireAppToken(
        for: ["https://graph.microsoft.com/.default"], authority: tenant, credential: .secret(clientSecret))
    send(authorization: "Bearer \(graph.token.secret)")

    // A token for a downstream API, for the user whose bearer token this request carried.
    let assertion = try UserAssertion(incomingBearerToken)
    let downstream = try await client.acquireOnBehalfOfToken(
        for: ["api://downstream/Data.Read"], assertion: assertion, authority: tenant, credential: .secret(clientSecret))
    send(authorization: "Bearer \(downstream.token.secret)")
}
