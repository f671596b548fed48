import SecureTokenCache

/// ErrorsAndWhatToDo.md: reacting to each outcome of a silent acquisition.
func handlingErrors(cache: TokenCache, account: Account) async throws {
    do {
        let result = try await cache.acquireTokenSilently(scopes: ["User.Read", "Mail.Read"], account: account)
        use(result.accessToken)
    } catch let error as TokenCacheError {
        switch error.code {
        case .interactionRequired:
            // Sign in interactively; keep the correlation id for support.
            print("sign in again", error.server?.correlationId ?? "")
        case .serverDeclinedScopes:
            // A token was issued (and cached) for fewer scopes.
            if let partial = error.declinedScopes {
                use(partial.result.accessToken)
                print("not granted:", partial.declined)
            }
        case .network, .lockTimeout:
            print("try again later:", error.message)
        default:
            print(error)  // never holds a secret
        }
    }
}

/// ErrorsAndWhatToDo.md: opening a group when the keyring is locked.
func handlingOpenErrors() throws {
    do {
        _ = try CacheGroup.open()
    } catch let error as TokenCacheError where error.code == .collectionLocked {
        // Unlock the keyring, or let the Secret Service ask the user:
        _ = try CacheGroup.open(configuration: CacheConfiguration(allowsInteraction: true))
    }
}
