import Glibc

/// Each tool's exact defaults, read from its source.
extension MSALSharedCache {
    /// The attribute every azure-identity cache item carries.
    static let identityServiceAttribute = ["MsalClientID": "Microsoft.Developer.IdentityService"]

    /// Azure CLI: `$AZURE_CONFIG_DIR/msal_token_cache.json` (default `~/.azure`), a plaintext file
    /// (azure-cli's `_msal_persistence` on Linux).
    ///
    /// - Throws: ``TokenCacheError/Code/invalidArgument`` when neither `AZURE_CONFIG_DIR` nor `HOME` is set.
    public static func azureCLI() throws -> MSALSharedCache {
        let folder = try environment("AZURE_CONFIG_DIR") ?? home() + "/.azure"
        return MSALSharedCache(name: "azure-cli", location: .file(path: folder + "/msal_token_cache.json"))
    }

    /// azure-identity for Python, JavaScript and Java: `~/.IdentityService/msal.cache.nocae` (or
    /// `.cae`), kept in the keyring under the schema of the cache's name, attribute
    /// `MsalClientID=Microsoft.Developer.IdentityService`, label `MSALCache`, raw JSON; with
    /// `plaintext`, the plaintext file at the same path that the tools write when they were
    /// allowed to fall back to one.
    ///
    /// - Throws: ``TokenCacheError/Code/invalidArgument`` when `HOME` is not set.
    public static func azureIdentity(cae: Bool = false, plaintext: Bool = false) throws -> MSALSharedCache {
        let cacheName = "msal.cache" + (cae ? ".cae" : ".nocae")
        let path = try home() + "/.IdentityService/" + cacheName
        guard !plaintext else {
            return MSALSharedCache(name: "azure-identity-file", location: .file(path: path))
        }
        return MSALSharedCache(
            name: "azure-identity",
            location: .keyring(
                KeyringItem(
                    schema: cacheName, attributes: identityServiceAttribute, label: "MSALCache", encoding: .raw,
                    signalFile: path)))
    }

    /// Azure.Identity for .NET and Azure PowerShell: `$XDG_DATA_HOME/.IdentityService/msal.cache.nocae`
    /// (or `.cae`, or the older `msal.cache` with `legacy`; default `~/.local/share`), kept in the
    /// keyring's `default` collection under schema `msal.cache` (not matched by name), attributes
    /// `MsalClientID=Microsoft.Developer.IdentityService` and
    /// `Microsoft.Developer.IdentityService=1.0.0.0`, label `MSALCache`, Base64.
    ///
    /// - Throws: ``TokenCacheError/Code/invalidArgument`` when neither `XDG_DATA_HOME` nor `HOME` is set.
    public static func azureIdentityDotNet(cae: Bool = false, legacy: Bool = false) throws -> MSALSharedCache {
        let folder = try environment("XDG_DATA_HOME") ?? home() + "/.local/share"
        let cacheName = legacy ? "msal.cache" : "msal.cache" + (cae ? ".cae" : ".nocae")
        var attributes = identityServiceAttribute
        attributes["Microsoft.Developer.IdentityService"] = "1.0.0.0"
        return MSALSharedCache(
            name: "azure-identity-dotnet",
            location: .keyring(
                KeyringItem(
                    schema: "msal.cache", attributes: attributes, label: "MSALCache", collection: "default",
                    encoding: .base64, matchesSchemaName: false, signalFile: folder + "/.IdentityService/" + cacheName)))
    }

    /// The preset named `name` (`azure-cli`, `azure-identity`, `azure-identity-file`,
    /// `azure-identity-dotnet`), or `nil`.
    ///
    /// - Throws: ``TokenCacheError/Code/invalidArgument`` when the home folder is unknown.
    public static func preset(named name: String) throws -> MSALSharedCache? {
        switch name {
        case "azure-cli": try azureCLI()
        case "azure-identity": try azureIdentity()
        case "azure-identity-file": try azureIdentity(plaintext: true)
        case "azure-identity-dotnet": try azureIdentityDotNet()
        default: nil
        }
    }

    /// The names ``preset(named:)`` knows.
    public static let presetNames = ["azure-cli", "azure-identity", "azure-identity-file", "azure-identity-dotnet"]

    /// Every place a tool keeps its cache by default: each preset, with the `.cae` and legacy
    /// variants (for `cachetool discover`).
    ///
    /// - Throws: ``TokenCacheError/Code/invalidArgument`` when the home folder is unknown.
    public static func knownLocations() throws -> [MSALSharedCache] {
        var all = [try azureCLI()]
        for cae in [false, true] {
            var item = try azureIdentity(cae: cae)
            var file = try azureIdentity(cae: cae, plaintext: true)
            var dotnet = try azureIdentityDotNet(cae: cae)
            if cae {
                item.name += "-cae"
                file.name += "-cae"
                dotnet.name += "-cae"
            }
            all += [item, file, dotnet]
        }
        var legacy = try azureIdentityDotNet(legacy: true)
        legacy.name += "-legacy"
        all.append(legacy)
        return all
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name).map({ String(cString: $0) }), !value.isEmpty else { return nil }
        return value
    }

    private static func home() throws -> String {
        guard let home = environment("HOME"), home.hasPrefix("/") else {
            throw TokenCacheError(.invalidArgument, "HOME is not set, so the tools' cache folders are unknown; set HOME")
        }
        return home
    }
}
