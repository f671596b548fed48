import Foundation
import Testing

@testable import SecureTokenCache

/// The presets' `.cae` and legacy variants, exactly where and how each tool keeps them (the
/// default `.nocae` ones are checked against the tools themselves in `KeyringTests.SharedKeyring`
/// and, with their environment variables, in the cachetool tests).
@Suite(.timeLimit(.minutes(1))) struct MSALSharedCachePresetTests {
    typealias KeyringItem = MSALSharedCache.KeyringItem

    /// The environment the presets read: this process's.
    let home: String
    let dataHome: String

    init() throws {
        let environment = ProcessInfo.processInfo.environment
        home = try #require(environment["HOME"], "the presets need HOME")
        dataHome = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.local/share"
    }

    func item(_ cache: MSALSharedCache) throws -> KeyringItem {
        guard case .keyring(let item) = cache.location else {
            throw TokenCacheError(.invalidArgument, "\(cache) is not a keyring item")
        }
        #expect(cache.lockFile == item.signalFile + ".lockfile")
        return item
    }

    @Test func azureIdentityKeepsEachVariantUnderTheSchemaOfItsName() throws {
        for (cae, name) in [(false, "msal.cache.nocae"), (true, "msal.cache.cae")] {
            let path = home + "/.IdentityService/" + name
            #expect(
                try item(.azureIdentity(cae: cae))
                    == KeyringItem(
                        schema: name, attributes: ["MsalClientID": "Microsoft.Developer.IdentityService"], label: "MSALCache",
                        collection: "default", encoding: .raw, matchesSchemaName: true, signalFile: path))
            #expect(try MSALSharedCache.azureIdentity(cae: cae, plaintext: true).location == .file(path: path))
        }
    }

    @Test func azureIdentityForDotNetKeepsEachVariantInOneSchemaWithItsOwnSignalFile() throws {
        for (cae, legacy, name) in [
            (false, false, "msal.cache.nocae"), (true, false, "msal.cache.cae"), (false, true, "msal.cache"),
        ] {
            #expect(
                try item(.azureIdentityDotNet(cae: cae, legacy: legacy))
                    == KeyringItem(
                        schema: "msal.cache",
                        attributes: [
                            "MsalClientID": "Microsoft.Developer.IdentityService",
                            "Microsoft.Developer.IdentityService": "1.0.0.0",
                        ],
                        label: "MSALCache", collection: "default", encoding: .base64, matchesSchemaName: false,
                        signalFile: dataHome + "/.IdentityService/" + name),
                "cae \(cae), legacy \(legacy)")
        }
    }

    /// `cachetool discover` looks at every variant, each under a name of its own.
    @Test func knownLocationsHoldEveryVariant() throws {
        let known = Dictionary(uniqueKeysWithValues: try MSALSharedCache.knownLocations().map { ($0.name, $0.location) })
        let expected: [String: MSALSharedCache] = [
            "azure-cli": try .azureCLI(),
            "azure-identity": try .azureIdentity(), "azure-identity-cae": try .azureIdentity(cae: true),
            "azure-identity-file": try .azureIdentity(plaintext: true),
            "azure-identity-file-cae": try .azureIdentity(cae: true, plaintext: true),
            "azure-identity-dotnet": try .azureIdentityDotNet(),
            "azure-identity-dotnet-cae": try .azureIdentityDotNet(cae: true),
            "azure-identity-dotnet-legacy": try .azureIdentityDotNet(legacy: true),
        ]
        #expect(known == expected.mapValues(\.location))
    }
}
