import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

extension KeyringTests {
    /// The msal-keyring store against the private keyring: a document in one Secret Service item
    /// in either dialect, the .NET dialect exactly as .NET writes it, real msal-python with
    /// msal-extensions on the azure-identity item, and damaged or mismatched items.
    @Suite(.timeLimit(.minutes(3))) struct SharedKeyring {
        typealias Support = KeyringTestSupport
        typealias KeyringItem = MSALSharedCache.KeyringItem

        let folder = TemporaryDirectory()

        /// An item no other test uses, its signal file in this test's folder.
        func uniqueItem(_ encoding: MSALSharedCache.Encoding, matchesSchemaName: Bool = true) -> KeyringItem {
            let name = Support.uniqueGroup("shared")
            return KeyringItem(
                schema: "org.securetokencache.test.\(name)", attributes: ["StcTest": name], label: "STC test \(name)",
                encoding: encoding, matchesSchemaName: matchesSchemaName, signalFile: folder.path + "/tool/\(name)")
        }

        /// A preset's item with its signal file moved into this test's folder.
        func moved(_ preset: MSALSharedCache) throws -> KeyringItem {
            guard case .keyring(var item) = preset.location else {
                Issue.record("\(preset) is not a keyring preset")
                throw TokenCacheError(.invalidArgument, "not a keyring preset")
            }
            item.signalFile = folder.path + "/tool/" + URL(fileURLWithPath: item.signalFile).lastPathComponent
            return item
        }

        func configuration(_ item: KeyringItem) -> CacheConfiguration {
            var configuration = CacheConfiguration(sharedCache: .keyring(item), lockTimeout: .seconds(5))
            configuration.directory = folder.path + "/data"
            return configuration
        }

        func open(_ item: KeyringItem) throws -> CacheGroup {
            try CacheGroup.open("shared", configuration: configuration(item))
        }

        func client(_ item: KeyringItem) -> KeyringClient {
            KeyringClient(
                schema: KeyringSchema(
                    name: item.schema, attributes: Array(item.attributes.keys), matchesName: item.matchesSchemaName),
                collection: item.collection)
        }

        /// The item's secret as text, or `nil` when there is no item.
        func stored(_ item: KeyringItem) throws -> String? {
            try client(item).withSecret(attributes: item.attributes) { String(decoding: $0, as: UTF8.self) }
        }

        /// Puts `text` into the item as another tool would, and touches the signal file.
        func put(_ text: String, into item: KeyringItem) throws {
            try client(item).storeText(text, label: item.label, attributes: item.attributes)
            try FileManager.default.createDirectory(
                atPath: SystemCall.parentDirectory(of: item.signalFile), withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: item.signalFile, contents: Data("No data here.".utf8))
        }

        func storeToken(_ accessToken: String, in group: CacheGroup) throws {
            try TokenCache(clientId: Fixtures.clientA, group: group).store(
                Fixtures.response(accessToken: accessToken), for: Fixtures.request())
        }

        func accessToken(in group: CacheGroup, username: String = "Alice@Contoso.com") throws -> String? {
            let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
            guard let account = try cache.account(username: username) else { return nil }
            return try cache.accessToken(for: ["User.Read"], account: account)?.token.secret
        }

        /// What msal-python with msal-extensions answers (`Tests/Support/msal_keyring_peer.py`).
        struct PeerAnswer: Decodable {
            var secret: String?
            var network_calls: Int
            var usernames: [String]
            var content_type: String?
        }

        func peer(_ command: String, _ item: KeyringItem, _ extra: [String: String] = [:]) throws -> String {
            var spec: [String: Any] = [
                "signal": item.signalFile, "schema": item.schema, "attributes": item.attributes, "label": item.label,
                "client_id": Fixtures.clientA, "authority": "https://login.microsoftonline.com/\(Fixtures.tenant)",
                "username": "Alice@Contoso.com", "scopes": ["User.Read"],
            ]
            for (key, value) in extra { spec[key] = value }
            let json = String(decoding: try JSONSerialization.data(withJSONObject: spec), as: UTF8.self)
            return try MSALPython.run(try MSALPython.interpreter(), ["msal_keyring_peer.py", command, json])
        }

        func peerAnswer(_ command: String, _ item: KeyringItem) throws -> PeerAnswer {
            try JSONDecoder().decode(PeerAnswer.self, from: Data(try peer(command, item).utf8))
        }

        // MARK: - Both dialects

        @Test(arguments: MSALSharedCache.Encoding.allCases)
        func aTokenMakesTheRoundTripThroughTheItem(encoding: MSALSharedCache.Encoding) throws {
            let item = uniqueItem(encoding)
            // Before the first write there is nothing, and looking creates nothing.
            #expect(try SharedKeyringBackend.holdsGroup("shared", configuration(item)) == false)
            #expect(throws: TokenCacheError.self) { try CacheGroup.openExisting("shared", configuration: configuration(item)) }
            #expect(!FileManager.default.fileExists(atPath: folder.path + "/tool"))
            #expect(try stored(item) == nil)

            let group = try open(item)
            #expect(group.storeDescription.kind == .msalKeyring)
            #expect(group.storeDescription.protection == .keyringItem)
            #expect(group.storeDescription.warnings.contains { $0.contains("keyring item") && $0.contains("cannot be sealed") })
            try storeToken("at-\(encoding)", in: group)
            #expect(try SharedKeyringBackend.holdsGroup("shared", configuration(item)))

            let text = try #require(try stored(item))
            let document: [UInt8]
            switch encoding {
            case .raw:
                #expect(text.hasPrefix("{"))
                document = Array(text.utf8)
            case .base64:
                document = try #require(SharedKeyringMedium.decodeBase64(Array(text.utf8)))
                #expect(SharedKeyringMedium.base64(document) == text)
            }
            #expect(try MSALDocument.parse(document).entryCount == 5)
            let signal = try #require(try SystemCall.lstat(item.signalFile, "test"))
            #expect(signal.st_mode & 0o777 == 0o600)

            let reopened = try open(item)
            #expect(try accessToken(in: reopened) == "at-\(encoding)")
            #expect(try reopened.exportMSAL(includeSecrets: true) == group.exportMSAL(includeSecrets: true))
        }

        // MARK: - The .NET dialect, exactly

        /// What Azure.Identity for .NET writes: Base64 of the document as a text secret, in the
        /// default collection, schema `msal.cache` not matched by name, two attributes, label
        /// `MSALCache`; and msal-python reads the decoded document.
        @Test(.tags(.slow)) func theDotNetItemIsWhatDotNetWritesAndMsalPythonReadsIt() throws {
            let item = try moved(try MSALSharedCache.azureIdentityDotNet())
            #expect(item.schema == "msal.cache" && item.label == "MSALCache" && !item.matchesSchemaName)
            #expect(item.collection == "default")
            try client(item).clear(attributes: item.attributes)
            let group = try open(item)
            try storeToken("at-for-dotnet", in: group)

            let secretTool = try #require(Support.which("secret-tool"), "secret-tool (libsecret-tools) is not installed")
            let output = try Support.run(
                secretTool,
                [
                    "search", "--all", "MsalClientID", "Microsoft.Developer.IdentityService",
                    "Microsoft.Developer.IdentityService", "1.0.0.0",
                ])
            let lines = (output.stdout + "\n" + output.stderr).split(separator: "\n").map(String.init)
            #expect(lines.filter { $0.hasPrefix("[/") }.count == 1, "one item: \(lines)")
            // In the collection the `default` alias names, as the .NET extension stores it.
            let defaultCollection = try Self.secretService(["ReadAlias", "default"])
            #expect(defaultCollection.count == 1)
            let paths = try Self.secretService(["SearchItems", Self.dictionary(item.attributes)])
            #expect(paths.count == 1 && paths.allSatisfy { $0.hasPrefix(defaultCollection[0] + "/") }, "\(paths)")
            #expect(lines.contains("label = MSALCache"))
            // libsecret stores the schema name as xdg:schema even when lookups do not match it;
            // secret-tool shows it as the item's schema.
            #expect(lines.contains("schema = msal.cache"))
            #expect(
                Set(lines.filter { $0.hasPrefix("attribute.") }) == [
                    "attribute.MsalClientID = Microsoft.Developer.IdentityService",
                    "attribute.Microsoft.Developer.IdentityService = 1.0.0.0",
                ])
            let secretLine = try #require(lines.first { $0.hasPrefix("secret = ") })
            let secret = String(secretLine.dropFirst("secret = ".count))
            let document = try #require(SharedKeyringMedium.decodeBase64(Array(secret.utf8)), "not Base64: \(secret.prefix(40))")
            #expect(SharedKeyringMedium.base64(document) == secret)
            #expect(document == SharedCacheStore.document(try group.index()))

            let answer = try peerAnswer("silent-dotnet", item)
            #expect(answer.secret == "at-for-dotnet")
            #expect(answer.network_calls == 0)
            #expect(answer.content_type == "text/plain")
        }

        /// The object paths the Secret Service answers `method` with (for `SearchItems`, the
        /// unlocked items' and then the locked ones').
        static func secretService(_ call: [String]) throws -> [String] {
            let gdbus = try #require(Support.which("gdbus"), "gdbus (libglib2.0-bin) is not installed")
            let answer = try Support.run(
                gdbus,
                [
                    "call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets",
                    "--method", "org.freedesktop.Secret.Service." + call[0],
                ] + call.dropFirst())
            try #require(answer.status == 0, "\(answer.stderr)")
            // (objectpath '/org/freedesktop/secrets/collection/login',) or ([objectpath '...'], @ao [])
            return answer.stdout.split(separator: "'").map(String.init).filter { $0.hasPrefix("/org/freedesktop/secrets/") }
        }

        /// `attributes` as a GVariant text dictionary.
        static func dictionary(_ attributes: [String: String]) -> String {
            "{" + attributes.sorted { $0.key < $1.key }.map { "'\($0.key)': '\($0.value)'" }.joined(separator: ", ") + "}"
        }

        /// Without matching the schema name, an item is found by its attributes alone, as the
        /// .NET extension finds items that other clients stored without `xdg:schema`.
        @Test func withoutSchemaMatchingAnItemIsFoundByItsAttributesAlone() throws {
            let item = uniqueItem(.base64, matchesSchemaName: false)
            let source = try open(uniqueItem(.raw))
            try storeToken("stored-without-schema", in: source)
            let document = try source.exportMSAL(includeSecrets: true)
            let secretTool = try #require(Support.which("secret-tool"), "secret-tool (libsecret-tools) is not installed")
            let name = try #require(item.attributes["StcTest"])
            let stored = try Support.run(
                secretTool, ["store", "--label", item.label, "StcTest", name], stdin: SharedKeyringMedium.base64(document))
            #expect(stored.status == 0, "\(stored.stderr)")

            #expect(try accessToken(in: open(item)) == "stored-without-schema")
            var matching = item
            matching.matchesSchemaName = true
            #expect(try SharedKeyringBackend.holdsGroup("shared", configuration(matching)) == false)
        }

        // MARK: - msal-python with msal-extensions on the azure-identity item

        @Test(.tags(.slow)) func msalPythonAndTheEngineFindEachOthersTokensInTheAzureIdentityItem() throws {
            let item = try moved(try MSALSharedCache.azureIdentity())
            #expect(
                item.schema == "msal.cache.nocae" && item.attributes == ["MsalClientID": "Microsoft.Developer.IdentityService"])
            try client(item).clear(attributes: item.attributes)

            // Ours, then msal-python's acquire_token_silent: a hit, no network call.
            let group = try open(item)
            try storeToken("at-from-swift", in: group)
            let answer = try peerAnswer("silent", item)
            #expect(answer.secret == "at-from-swift")
            #expect(answer.network_calls == 0)
            #expect(answer.content_type == "text/plain")

            // msal-python's write through PersistedTokenCache, then our lookup.
            try peer(
                "store", item,
                [
                    "uid": "uid-bob", "username": "Bob@Contoso.com", "access_token": "at-from-python",
                    "refresh_token": "rt-from-python",
                ])
            let reader = try open(item)
            #expect(try accessToken(in: reader, username: "Bob@Contoso.com") == "at-from-python")
            #expect(try accessToken(in: reader) == "at-from-swift", "msal-python's write kept our token")
        }

        // MARK: - A locked keyring

        /// While the collection is locked the item is still found (its attributes are public),
        /// opening and writing are the typed locked error, nothing prompts, and after the unlock
        /// the document is as it was.
        @Test func aLockedCollectionIsATypedErrorAndTheItemIsStillFound() throws {
            let item = uniqueItem(.raw)
            let group = try open(item)
            try storeToken("before-lock", in: group)
            let keyring = KeyringClient()
            try keyring.lockDefaultCollection()
            var unlocked = false
            defer { if !unlocked { try? Support.unlockTestKeyring() } }
            #expect(try keyring.isDefaultCollectionLocked())

            #expect(try SharedKeyringBackend.holdsGroup("shared", configuration(item)))
            let opening = #expect(throws: TokenCacheError.self) { try open(item) }
            #expect(opening?.code == .collectionLocked)
            let writing = #expect(throws: TokenCacheError.self) { try storeToken("while-locked", in: group) }
            #expect(writing?.code == .collectionLocked)
            #expect(try keyring.isDefaultCollectionLocked(), "something unlocked the collection")

            try Support.unlockTestKeyring()
            unlocked = true
            #expect(try accessToken(in: open(item)) == "before-lock")
        }

        // MARK: - Bad input

        @Test func anItemThatIsNotADocumentIsATypedErrorAndStaysAsItWas() throws {
            let document = #"{"AccessToken": {}, "Account": {}, "IdToken": {}, "RefreshToken": {}, "AppMetadata": {}}"#
            let cases: [(MSALSharedCache.Encoding, String, String)] = [
                (.raw, #"{"AccessToken": {"#, "not an MSAL cache document"),
                (.raw, SharedKeyringMedium.base64(Array(document.utf8)), "open it with encoding base64"),
                (.base64, document, "open it with encoding raw"),
                (.base64, "not base64 at all!", "neither Base64 nor JSON"),
            ]
            for (encoding, content, message) in cases {
                let item = uniqueItem(encoding)
                try put(content, into: item)
                do {
                    _ = try open(item)
                    Issue.record("\(encoding) item holding \(content.prefix(20)) was opened")
                } catch let error as TokenCacheError {
                    #expect(error.code == .malformedCache)
                    #expect(error.message.contains(message), "\(error.message)")
                }
                #expect(try stored(item) == content, "the item was changed")
            }
        }

        /// A group already open when another tool writes the other dialect: the next write is a
        /// typed error and the item is not written over.
        @Test func aWriteOntoAnItemInTheOtherDialectFailsAndLeavesIt() throws {
            let item = uniqueItem(.base64, matchesSchemaName: false)
            let group = try open(item)
            try storeToken("first", in: group)
            let raw = String(decoding: SharedCacheStore.document(try group.index()), as: UTF8.self)
            try put(raw, into: item)
            do {
                try storeToken("second", in: group)
                Issue.record("a write went onto an item holding raw JSON")
            } catch let error as TokenCacheError {
                #expect(error.code == .malformedCache)
                #expect(error.message.contains("open it with encoding raw"))
            }
            #expect(try stored(item) == raw)
        }
    }
}
