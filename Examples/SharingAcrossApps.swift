import SecureTokenCache

/// SharingSignInAcrossApps.md: two apps of one publisher share a group of their own.
func sharingAcrossApps() throws {
    // In app A and in app B, with their own client ids:
    let group = try CacheGroup.open("com.contoso.apps")
    let mail = try TokenCache(clientId: "11111111-aaaa-4bbb-8ccc-000000000001", group: group)
    let calendar = try TokenCache(clientId: "22222222-aaaa-4bbb-8ccc-000000000002", group: group)
    print(try mail.accounts(), try calendar.accounts())
}

/// SharingSignInAcrossApps.md: choosing the store instead of `auto`.
func sharingChoosingStore() throws {
    // A server or a container without a desktop session: a file group with a key file.
    let configuration = CacheConfiguration(
        store: .file, keySource: .keyFile(path: "/etc/contoso/token-cache.key"))
    let group = try CacheGroup.open("com.contoso.daemon", configuration: configuration)

    let description = group.storeDescription
    print("\(description.kind) at \(description.location): \(description.protection) (\(description.reason))")
}

/// SharingSignInAcrossApps.md: a passphrase from the environment.
func sharingPassphrase() throws {
    let configuration = CacheConfiguration(
        store: .file, keySource: .passphraseFromEnvironment(variable: "CONTOSO_CACHE_PASSPHRASE"))
    _ = try CacheGroup.open("com.contoso.ci", configuration: configuration)
}

/// SharingSignInAcrossApps.md: following other processes' writes.
func sharingChanges(group: CacheGroup, cache: TokenCache) async throws {
    for await _ in try group.changes() {
        let accounts = try cache.accounts()  // catches up with the other process's commit
        print("now signed in:", accounts.map(\.username))
    }
}

/// SharingSignInAcrossApps.md: moving a group between the keyring and the file store.
func sharingMove() throws {
    let moved = try CacheGroup.move(
        "com.contoso.apps",
        from: CacheConfiguration(store: .keyring),
        to: CacheConfiguration(store: .file, keySource: .keyFile(path: "/home/me/.config/contoso.key")))
    print("moved \(moved) records")
}
