import SecureTokenCache

/// SharingWithAzureTools.md: Azure CLI's cache as a group.
func sharingWithAzureCLI() throws {
    // Azure CLI's own cache, shared with Azure CLI: a sign-in in either is seen by the other.
    let group = try CacheGroup.open("azure-cli", configuration: CacheConfiguration(sharedCache: .azureCLI()))
    let cache = try TokenCache(clientId: "04b07795-8ddb-461a-bbee-02f9e1bf7b46", group: group)  // Azure CLI's client id
    for account in try cache.accounts() {
        if let cached = try cache.accessToken(for: ["https://management.core.windows.net//.default"], account: account) {
            use(cached.token.secret)
        }
    }
}

/// SharingWithAzureTools.md: the other presets and a custom cache.
func sharingWithAzureSDKs() throws {
    let python = try CacheGroup.open(
        "azure-identity", configuration: CacheConfiguration(sharedCache: try .azureIdentity()))
    let dotnet = try CacheGroup.open(
        "azure-identity-dotnet", configuration: CacheConfiguration(sharedCache: try .azureIdentityDotNet()))
    let custom = try CacheGroup.open(
        "my-tool", configuration: CacheConfiguration(sharedCache: .file(path: "/home/me/project/msal_cache.json")))
    for group in [python, dotnet, custom] {
        print(group.name, group.storeDescription.protection)  // .keyringItem or .plaintextFile
    }
}

/// SharingWithAzureTools.md: taking Azure CLI's tokens into a sealed group.
func sharingMoveFromAzureCLI() throws {
    let moved = try CacheGroup.move(
        "com.example.azure",
        from: CacheConfiguration(sharedCache: try .azureCLI()),
        to: CacheConfiguration(store: .file))
    print("moved \(moved) records; Azure CLI is signed out")
}
