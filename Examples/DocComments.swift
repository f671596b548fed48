import SecureTokenCache

// The samples in the library's doc comments that no article shows (one function per symbol).

/// ``CacheGroup/open(_:configuration:)``.
func docCacheGroupOpen() throws {
    let group = try CacheGroup.open()  // auto: where the group lives, else the keyring, else a file
    print(group.storeDescription.reason)

    let configuration = CacheConfiguration(store: .file, keySource: .passphraseFromEnvironment(variable: "CACHE_PASSPHRASE"))
    let ci = try CacheGroup.open("com.contoso.ci", configuration: configuration)
    print(ci.storeDescription.protection)  // sealed with a passphrase-derived key (Argon2id)
}

/// ``TokenCache/init(clientId:group:)`` and ``TokenCache/accounts()``.
func docTokenCache() throws {
    let group = try CacheGroup.open()
    let cache = try TokenCache(clientId: "11111111-aaaa-4bbb-8ccc-000000000001", group: group)
    for account in try cache.accounts() {
        print(account.username)
    }
}

/// ``TokenCache/acquireTokenSilently(scopes:account:authority:forceRefresh:endpoint:timeout:)``.
func docAcquireTokenSilently(cache: TokenCache, account: Account) async throws {
    do {
        let result = try await cache.acquireTokenSilently(scopes: ["User.Read"], account: account)
        send(authorization: "\(result.tokenType) \(result.accessToken)")
    } catch let error as TokenCacheError where error.code == .interactionRequired {
        // Sign in interactively, then store the answer with store(_:for:signIn:).
    }
}

/// ``TokenCache/store(_:for:signIn:)``.
func docStore(cache: TokenCache, authority: Authority, scopes: Scopes, answer: [UInt8]) throws {
    let request = TokenRequest(
        clientId: cache.clientId, authority: authority, scopes: scopes, grantType: "authorization_code")
    try cache.store(try TokenResponse(json: answer), for: request)
}

/// ``CacheGroup/importADAL(_:)``.
func docImportADAL(group: CacheGroup, adalCache: [UInt8]) throws {
    let imported = try group.importADAL(adalCache)  // all or nothing
    print("imported \(imported) entries")
}

/// ``FileGroupIntegrity/check(_:configuration:)``.
func docFileGroupIntegrity(configuration: CacheConfiguration) throws {
    let integrity = try FileGroupIntegrity.check("com.contoso.ci", configuration: configuration)
    for finding in integrity.findings { print(finding) }
}

/// ``TokenCacheError``.
func docTokenCacheError() {
    do {
        _ = try CacheGroup.open()
    } catch let error as TokenCacheError {
        switch error.code {
        case .collectionLocked, .noSessionBus, .secretServiceUnavailable:
            print("the keyring is not usable: \(error.message)")
        default:
            print(error)  // code and message; never a secret
        }
    } catch {}
}

/// ``TokenCache/appToken(for:authority:)`` and ``TokenCache/storeAppToken(_:for:)``.
func docAppToken(cache: TokenCache, tenantId: String) async throws {
    let authority = try Authority("https://login.microsoftonline.com/\(tenantId)")
    let scopes: Scopes = ["https://graph.microsoft.com/.default"]
    if let cached = try cache.appToken(for: scopes, authority: authority), !cached.shouldRefresh {
        send(authorization: "Bearer \(cached.token.secret)")
    } else {
        let answer = try await redeemClientCredentials(scopes: scopes, authority: authority)
        let request = TokenRequest(
            clientId: cache.clientId, authority: authority, scopes: scopes,
            grantType: TokenCache.clientCredentialsGrant)
        let stored = try cache.storeAppToken(try TokenResponse(json: answer), for: request)
        send(authorization: "Bearer \(stored.secret)")
    }
}

/// ``TokenCache/onBehalfOfToken(for:assertion:authority:)``.
func docOnBehalfOfToken(cache: TokenCache, incomingBearerToken: String, scopes: Scopes, authority: Authority) throws {
    let assertion = try UserAssertion(incomingBearerToken)
    if let cached = try cache.onBehalfOfToken(for: scopes, assertion: assertion, authority: authority) {
        send(authorization: "Bearer \(cached.token.secret)")
    }
}

/// ``ConfidentialClient``.
func docConfidentialClient(cache: TokenCache, authority: Authority, secret: String) async throws {
    let client = ConfidentialClient(cache: cache, credentialKind: .secret)
    let token = try await client.acquireAppToken(
        for: ["https://graph.microsoft.com/.default"], authority: authority, credential: .secret(secret))
    send(authorization: "Bearer \(token.token.secret)")
}

/// The "Server apps" article: passing the authority's challenge on to the web API's caller.
func serverAppsChallenge(
    client: ConfidentialClient, scopes: Scopes, assertion: UserAssertion, tenant: Authority, credential: ClientCredential
) async throws {
    do {
        let token = try await client.acquireOnBehalfOfToken(
            for: scopes, assertion: assertion, authority: tenant, credential: credential)
        send(authorization: "Bearer \(token.token.secret)")
    } catch let error as TokenCacheError where error.code == .interactionRequired {
        challenge(error.server?.suberror)
    }
}
