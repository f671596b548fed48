import Foundation
import Testing

@testable import SecureTokenCache

extension KeyringTests {
    /// `CacheGroup.open` with `auto`, and moving a group between the keyring and the file store.
    @Suite struct StoreChoice {
        typealias Support = KeyringTestSupport

        private func folder() throws -> String {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("stc-choice-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            return url.path
        }

        @Test func autoPutsANewGroupInTheUnlockedKeyringAndSaysWhy() throws {
            let root = try folder()
            defer { try? FileManager.default.removeItem(atPath: root) }
            let group = try CacheGroup.open(Support.uniqueGroup("auto"), configuration: CacheConfiguration(directory: root))
            #expect(group.storeDescription.kind == .keyring)
            #expect(group.storeDescription.protection == .keyring)
            #expect(group.storeDescription.reason.contains("reachable and unlocked"))
        }

        @Test func aGroupMovesFromTheKeyringToTheFileStoreAndBackLosingNothing() throws {
            let root = try folder()
            defer { try? FileManager.default.removeItem(atPath: root) }
            let name = Support.uniqueGroup("move")
            let keyring = CacheConfiguration(store: .keyring, directory: root)
            let file = CacheConfiguration(store: .file, directory: root, keySource: .passphrase("move it"))

            let original = try CacheGroup.open(name, configuration: keyring)
            let vector = try Fixtures.vector("v2_two_accounts_two_tenants")
            try original.importMSAL(vector)
            let cache = try TokenCache(clientId: Fixtures.clientA, group: original)
            try cache.store(try Fixtures.response(), for: try Fixtures.request())
            let expected = try original.exportMSAL(includeSecrets: true)
            let signedIn = try cache.currentAccount().current?.username

            let toFile = try CacheGroup.move(name, from: keyring, to: file)
            #expect(toFile > 0)
            let inFile = try CacheGroup.open(
                name, configuration: CacheConfiguration(directory: root, keySource: .passphrase("move it")))
            #expect(inFile.storeDescription.kind == .file, "auto finds the group in its new home")
            #expect(try inFile.exportMSAL(includeSecrets: true) == expected)
            #expect(try TokenCache(clientId: Fixtures.clientA, group: inFile).currentAccount().current?.username == signedIn)
            // The keyring copy is empty, and no longer where auto looks.
            #expect(try KeyringStore(group: name).load().0.isEmpty)

            let back = try CacheGroup.move(name, from: file, to: keyring)
            #expect(back == toFile)
            let inKeyring = try CacheGroup.open(name, configuration: CacheConfiguration(directory: root))
            #expect(inKeyring.storeDescription.kind == .keyring)
            #expect(try inKeyring.exportMSAL(includeSecrets: true) == expected)
        }

        /// A file group keyed by the keyring seals with the keyring group's key item (one item per
        /// group name, whichever store made it), and no other kind of key opens it.
        @Test func aFileGroupKeyedByTheKeyringUsesTheKeyringGroupsKeyItem() throws {
            let root = try folder()
            defer { try? FileManager.default.removeItem(atPath: root) }
            let name = Support.uniqueGroup("file-keyring-key")
            _ = try KeyringStore(group: name, root: root)
            let file = CacheConfiguration(store: .file, directory: root, keySource: .keyring)
            let group = try CacheGroup.open(name, configuration: file)
            #expect(group.storeDescription.kind == .file)
            #expect(group.storeDescription.protection == .keyring)
            try group.importMSAL(try Fixtures.vector("v1_single_account"))

            KeyringKeyProvider.forgetCachedKeys()
            let client = KeyringClient(schema: .group)
            #expect(try client.count(matching: ["group": name, "role": "key"]) == 1)
            let directory = try GroupDirectory.madeKeyring(name, root: root)
            let key = try KeyringKeyProvider(
                group: name, client: client, lock: FileLock(path: directory.file("lock"), purpose: "the group"),
                lockTimeout: .seconds(10)
            ).groupKey()
            let header = try GroupHeader(
                decoding: Array(try Data(contentsOf: URL(fileURLWithPath: root + "/" + name + "/header"))))
            #expect(header.keyMatches(try RecordSealer(groupKey: key, groupName: name)))
            #expect(
                try CacheGroup.open(name, configuration: file).exportMSAL(includeSecrets: true)
                    == Fixtures.vector("v1_single_account"))
            let passphrase = #expect(throws: TokenCacheError.self) {
                try CacheGroup.open(
                    name, configuration: CacheConfiguration(store: .file, directory: root, keySource: .passphrase("x")))
            }
            #expect(passphrase?.code == .wrongKey)
        }

        @Test func aMoveIntoAGroupThatHoldsRecordsIsRefusedAndChangesNothing() throws {
            let root = try folder()
            defer { try? FileManager.default.removeItem(atPath: root) }
            let name = Support.uniqueGroup("occupied")
            let keyring = CacheConfiguration(store: .keyring, directory: root)
            let file = CacheConfiguration(store: .file, directory: root, keySource: .passphrase("x"))
            try CacheGroup.open(name, configuration: keyring).importMSAL(try Fixtures.vector("v1_single_account"))
            try CacheGroup.open(name, configuration: file).importMSAL(try Fixtures.vector("v3_foci_two_clients"))
            let error = #expect(throws: TokenCacheError.self) { try CacheGroup.move(name, from: keyring, to: file) }
            #expect(error?.code == .invalidArgument)
            #expect(
                try CacheGroup.open(name, configuration: keyring).exportMSAL(includeSecrets: true)
                    == Fixtures.vector("v1_single_account"))
            #expect(
                try CacheGroup.open(name, configuration: file).exportMSAL(includeSecrets: true)
                    == Fixtures.vector("v3_foci_two_clients"))
        }

        /// `auto` never falls back to weaker protection: a group that lives in the keyring, with
        /// the keyring locked, is an error, not a new, empty file group.
        @Test func autoReportsALockedKeyringForAGroupThatLivesThere() throws {
            let root = try folder()
            defer { try? FileManager.default.removeItem(atPath: root) }
            let name = Support.uniqueGroup("locked-auto")
            let created = try CacheGroup.open(name, configuration: CacheConfiguration(directory: root))
            #expect(created.storeDescription.kind == .keyring)
            try created.importMSAL(try Fixtures.vector("v1_single_account"))

            let client = KeyringClient()
            try client.lockDefaultCollection()
            var unlocked = false
            defer { if !unlocked { try? Support.unlockTestKeyring() } }
            KeyringKeyProvider.forgetCachedKeys()
            let error = #expect(throws: TokenCacheError.self) {
                try CacheGroup.open(name, configuration: CacheConfiguration(directory: root))
            }
            #expect(error?.code == .collectionLocked)
            #expect(!FileManager.default.fileExists(atPath: root + "/" + name), "no file group was made in its place")

            try Support.unlockTestKeyring()
            unlocked = true
            let reopened = try CacheGroup.open(name, configuration: CacheConfiguration(directory: root))
            #expect(try reopened.exportMSAL(includeSecrets: true) == Fixtures.vector("v1_single_account"))
        }

        /// A file group made where no Secret Service ran (over SSH, say) is keyed by its default
        /// key file; opened later where one runs, with no key source configured, it is opened with
        /// that key file, as its header says, not offered the keyring's key (a wrong key).
        @Test func aFileGroupMadeWithAKeyFileOpensWithItOnceASecretServiceRuns() throws {
            let root = try folder()
            defer { try? FileManager.default.removeItem(atPath: root) }
            let name = Support.uniqueGroup("key-file-then-keyring")
            let keyFile = try CacheGroup.defaultKeyFile(name)
            defer { try? FileManager.default.removeItem(atPath: keyFile) }
            let made = try CacheGroup.open(
                name, configuration: CacheConfiguration(store: .file, directory: root, keySource: .keyFile(path: keyFile)))
            let imported = try made.importMSAL(try Fixtures.vector("v1_single_account"))

            for store in [StoreKind.file, .auto] {
                let opened = try CacheGroup.open(name, configuration: CacheConfiguration(store: store, directory: root))
                #expect(opened.storeDescription.kind == .file)
                #expect(opened.storeDescription.protection == .keyFile)
                #expect(try opened.exportMSAL(includeSecrets: true) == made.exportMSAL(includeSecrets: true))
                #expect(imported > 0)
            }
            // Nothing of the keyring's was made for it: no key item, no coordination folder.
            #expect(try KeyringClient(schema: .group).count(matching: ["group": name, "role": "key"]) == 0)
            #expect(!FileManager.default.fileExists(atPath: root + "/." + name + ".keyring"))
        }
    }
}
