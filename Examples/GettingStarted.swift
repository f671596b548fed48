import SecureTokenCache

/// GettingStarted.md: a desktop app or command-line tool that signs in once and shares the
/// sign-in with the other apps of the group.
func gettingStarted() async throws {
    let group = try CacheGroup.open()  // com.microsoft.identity.universalstorage
    let cache = try TokenCache(clientId: "11111111-aaaa-4bbb-8ccc-000000000001", group: group)
    print(group.storeDescription.kind, group.storeDescription.protection)

    let authority = try Authority("https://login.microsoftonline.com/common")
    let scopes: Scopes = ["User.Read"]

    // The first time, no account is cached: sign in interactively and store the answer.
    if try cache.accounts().isEmpty {
        let answer = try await signInInteractively(scopes: ["User.Read", "offline_access"])
        let request = TokenRequest(
            clientId: cache.clientId, authority: authority, scopes: scopes, grantType: "authorization_code")
        try cache.store(try TokenResponse(json: answer), for: request)
    }

    // Every later call, in this process or in another app that opens the group:
    guard let account = try cache.accounts().first else { return }
    do {
        let result = try await cache.acquireTokenSilently(scopes: scopes, account: account)
        send(authorization: "\(result.tokenType) \(result.accessToken)")
    } catch let error as TokenCacheError where error.code == .interactionRequired {
        // The refresh token is gone or was revoked: sign in interactively again.
        print("sign in again:", error.message)
    }
}

/// GettingStarted.md: a quick lookup without the network.
func gettingStartedLookup(cache: TokenCache, account: Account) throws {
    if let cached = try cache.accessToken(for: ["User.Read"], account: account) {
        use(cached.token.secret)
    }
}

/// GettingStarted.md: signing out of one app, and wiping a user from the whole group.
func gettingStartedSignOut(cache: TokenCache, account: Account) throws {
    try cache.signOut(account)  // this app only: the family's other apps stay signed in
    try cache.group.wipe(account)  // every app of the group
}

/// SecureTokenCache.md (the landing page): the shortest use.
func overview(scopes: Scopes) async throws {
    let group = try CacheGroup.open()  // com.microsoft.identity.universalstorage
    let cache = try TokenCache(clientId: "11111111-aaaa-4bbb-8ccc-000000000001", group: group)
    guard let account = try cache.accounts().first else { return }
    let result = try await cache.acquireTokenSilently(scopes: scopes, account: account)
    send(authorization: "\(result.tokenType) \(result.accessToken)")
}
