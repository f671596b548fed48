import SecureTokenCache

/// SecurityModel.md: what protects an opened group.
func securityModel(group: CacheGroup) throws {
    switch group.storeDescription.protection {
    case .keyring, .passphrase, .keyFile:
        break  // sealed at rest
    case .plaintextFile, .keyringItem:
        print("warning: another tool's cache, not sealed")
    case .memoryOnly:
        print("nothing is written")
    }
    for warning in group.storeDescription.warnings { print("warning:", warning) }
}

/// SecurityModel.md: showing that a token changed without showing the token.
func securityFingerprint(token: AccessToken) {
    print("access token", SecretFingerprint.of(token.secret))
}

/// SecurityModel.md: is the keyring usable before opening anything?
func securityCheckKeyring() {
    do {
        try CacheGroup.checkSecretService()
    } catch let error as TokenCacheError {
        print("the keyring is not usable: \(error.code): \(error.message)")
    } catch {}
}
