import Foundation
import Testing

@testable import SecureTokenCache

extension KeyringTests {
    /// The KeyringStore against the real daemon: transactions, loads, updates, hygiene.
    @Suite struct Store {
        typealias Support = KeyringTestSupport

        @Test func transactLoadUpdateAndSignOut() throws {
            let group = Support.uniqueGroup("store")
            let writer = try KeyringStore(group: group)
            #expect(writer.storeDescription.kind == .keyring)
            #expect(writer.storeDescription.protection == .keyring)
            let (initial, start) = try writer.load()
            #expect(initial.isEmpty)
            #expect(start.generation == 0)
            #expect(writer.currentGeneration() == 0)

            let first = try writer.transact(since: start) { transaction in
                guard case .unchanged = transaction.update else {
                    Issue.record("a writer that is up to date must see no changes")
                    return []
                }
                return [
                    .put(Support.record("at-1", "token one")), .put(Support.record("rt-1", "refresh one", kind: .refreshToken)),
                ]
            }
            #expect(first.generation == 1)
            #expect(writer.currentGeneration() == 1)

            // A second store of the same group (as another CacheGroup in this process would)
            // catches up from the journal: the changes, without reading the item.
            let reader = try KeyringStore(group: group)
            #expect(reader.currentGeneration() == 1)
            let reads = reader.itemReads
            guard case .changes(let changes, let cursor) = try reader.update(since: .start) else {
                Issue.record("a reader that is behind catches up from the journal")
                return
            }
            #expect(Support.describe(changes).sorted() == ["put at-1=token one", "put rt-1=refresh one"])
            #expect(cursor.generation == 1)
            #expect(reader.itemReads == reads)
            guard case .unchanged = try reader.update(since: cursor) else {
                Issue.record("nothing changed")
                return
            }

            // The reader signs out (deletes); its transaction first sees the writer's state.
            let second = try reader.transact(since: cursor) { _ in [.delete(RecordID(kind: .accessToken, name: "at-1"))] }
            #expect(second.generation == 2)
            #expect(writer.currentGeneration() == 2)
            guard case .changes(let after, _) = try writer.update(since: first) else {
                Issue.record("the writer must see the reader's delete")
                return
            }
            #expect(Support.describe(after) == ["delete at-1"])

            // A transaction with no changes writes nothing.
            let none = try writer.transact(since: second) { _ in [] }
            #expect(none.generation == 2)
            #expect(try Support.payloads(KeyringStore(group: group).load().0) == ["rt-1": "refresh one"])
        }

        @Test func aBodyThatThrowsWritesNothing() throws {
            let group = Support.uniqueGroup("throws")
            let store = try KeyringStore(group: group)
            let cursor = try store.transact(since: .start) { _ in [.put(Support.record("a", "1"))] }
            struct Refused: Error {}
            #expect(throws: Refused.self) {
                try store.transact(since: cursor) { _ in throw Refused() }
            }
            #expect(store.currentGeneration() == cursor.generation)
            #expect(try Support.payloads(store.load().0) == ["a": "1"])
        }

        /// Many records, still two items: the key and one records item.
        @Test func aGroupIsTwoItemsWhateverItsSize() throws {
            let group = Support.uniqueGroup("items")
            let store = try KeyringStore(group: group)
            var cursor = StoreCursor.start
            for batch in 0..<3 {
                cursor = try store.transact(since: cursor) { _ in
                    (0..<50).map { .put(Support.record("token-\(batch)-\($0)", String(repeating: "x", count: 2048))) }
                }
            }
            #expect(try store.load().0.count == 150)
            let client = KeyringClient()
            #expect(try client.count(matching: ["group": group]) == 2)
            #expect(try client.count(matching: ["group": group, "role": "key"]) == 1)
            #expect(try client.count(matching: ["group": group, "role": "records"]) == 1)
        }

        /// Item labels and attributes are readable by any process of the user, even while the
        /// collection is locked; the secrets are sealed. Nothing identifying may show.
        @Test func secretToolShowsNoTokenUserTenantOrClient() throws {
            let group = Support.uniqueGroup("hygiene")
            let user = "alice.hygiene@contoso.example"
            let tenant = UUID().uuidString.lowercased()
            let client = UUID().uuidString.lowercased()
            let token = "eyJ0eXAiOiJKV1Qi.secret-access-token-\(UUID().uuidString)"
            let store = try KeyringStore(group: group)
            let name = "\(user)-login.microsoftonline.com-accesstoken-\(client)-\(tenant)-user.read"
            _ = try store.transact(since: .start) { _ in
                [
                    .put(Support.record(name, token)),
                    .put(Support.record("\(user)-account", "{\"username\":\"\(user)\"}", kind: .account)),
                ]
            }
            let secretTool = try #require(Support.which("secret-tool"), "secret-tool (libsecret-tools) is not installed")
            let output = try Support.run(secretTool, ["search", "--all", "--unlock", "xdg:schema", KeyringSchema.group.name])
            let shown = output.stdout + output.stderr
            #expect(shown.contains(group), "secret-tool should list the group's items: \(shown)")
            for forbidden in [user, "alice", tenant, client, token, "secret-access-token", "accesstoken", "username"] {
                #expect(!shown.contains(forbidden), "secret-tool output shows \(forbidden)")
            }
            // The only attributes are the schema, the group and the role.
            let attributeLines = shown.split(separator: "\n").filter { $0.hasPrefix("attribute.") }
            #expect(!attributeLines.isEmpty)
            for line in attributeLines {
                #expect(
                    line.hasPrefix("attribute.group = ") || line.hasPrefix("attribute.role = ")
                        || line.hasPrefix("attribute.xdg:schema = "), "unexpected attribute: \(line)")
            }
        }

        @Test func aDamagedRecordsItemIsAnErrorNotAnEmptyGroup() throws {
            let group = Support.uniqueGroup("damaged")
            let store = try KeyringStore(group: group)
            _ = try store.transact(since: .start) { _ in [.put(Support.record("a", "1"))] }
            let client = KeyringClient()
            var bytes = try #require(try client.withSecret(attributes: ["group": group, "role": "records"]) { Array($0) })
            bytes[bytes.count / 2] ^= 0x40
            try bytes.withUnsafeBytes {
                try client.store($0, label: "tampered", attributes: ["group": group, "role": "records"])
            }
            let error = #expect(throws: TokenCacheError.self) { try store.load() }
            #expect(error?.code == .storeCorrupted)
            // Deleting the item is noticed too: generation 1 was committed.
            try client.clear(attributes: ["group": group, "role": "records"])
            let missing = #expect(throws: TokenCacheError.self) { try store.load() }
            #expect(missing?.code == .storeCorrupted)
        }
    }
}
