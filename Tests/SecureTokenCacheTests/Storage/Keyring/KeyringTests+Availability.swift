import Foundation
import Testing

@testable import SecureTokenCache

extension KeyringTests {
    /// The availability matrix against the real daemon: each case its own typed error, and the
    /// group's records intact afterwards.
    @Suite struct Availability {
        typealias Support = KeyringTestSupport

        /// A group with three records, and its store.
        private func populatedGroup(_ prefix: String) throws -> (String, KeyringStore, [String: String]) {
            let group = Support.uniqueGroup(prefix)
            let store = try KeyringStore(group: group)
            let expected = ["at": "access", "rt": "refresh", "id": "id token"]
            _ = try store.transact(since: .start) { _ in expected.map { .put(Support.record($0.key, $0.value)) } }
            return (group, store, expected)
        }

        @Test func aBusWithoutASecretServiceIsSecretServiceUnavailable() throws {
            let (group, store, expected) = try populatedGroup("noservice")
            let bus = try PrivateBus()
            let error = #expect(throws: TokenCacheError.self) {
                // A limit far above what the answer takes, so that a starved bus is not taken for
                // one without a Secret Service.
                try KeyringClient.probe(busAddress: bus.address, timeout: .seconds(10))
            }
            #expect(error?.code == .secretServiceUnavailable)

            let output = try Support.helper(
                ["open", group],
                environment: Support.environment(["DBUS_SESSION_BUS_ADDRESS": bus.address])
            )
            #expect(output.stdout == "error secretServiceUnavailable\n", "\(output.stderr)")
            // Nothing was created or lost: the group still opens with its records.
            #expect(try Support.payloads(store.load().0) == expected)
            #expect(try Support.helper(["count", group]).stdout == "ok 3\n")
        }

        @Test func aLockedCollectionIsCollectionLockedAndLosesNothing() throws {
            let (group, store, expected) = try populatedGroup("locked")
            let generation = store.currentGeneration()
            let client = KeyringClient()
            try client.lockDefaultCollection()
            var unlocked = false
            defer { if !unlocked { try? Support.unlockTestKeyring() } }
            #expect(try client.isDefaultCollectionLocked())

            // Catching up from the journal needs no D-Bus (the key is already in this process), so
            // it still answers, with the whole group. With the journal emptied it must read the
            // item.
            var caughtUp: [String: String] = [:]
            Support.apply(try store.update(since: .start), to: &caughtUp)
            #expect(caughtUp == expected)
            let directory = try GroupDirectory.madeKeyring(group)
            #expect(truncate(directory.file(KeyringJournal.fileName), 0) == 0)

            // Never "empty" or "signed out": every path that needs the item says locked.
            for (what, attempt) in [
                ("load", { _ = try store.load() }),
                ("update", { _ = try store.update(since: .start) }),
                (
                    "transact",
                    { _ = try store.transact(since: .start) { _ in [.delete(RecordID(kind: .accessToken, name: "at"))] } }
                ),
                ("open", { _ = try KeyringStore(group: group) }),
                ("lookup", { _ = try client.withSecret(attributes: ["group": group, "role": "records"]) { $0.count } }),
            ] as [(String, () throws -> Void)] {
                let error = #expect(throws: TokenCacheError.self, "\(what)") { try attempt() }
                #expect(error?.code == .collectionLocked, "\(what): \(String(describing: error))")
            }
            // Locked after the check (a race): the lookup itself must neither prompt nor say "not found".
            let started = ContinuousClock.now
            let raced = #expect(throws: TokenCacheError.self) {
                try client.withSecretAfterLockCheck(attributes: ["group": group, "role": "records"]) { $0.count }
            }
            #expect(raced?.code == .collectionLocked)
            #expect(ContinuousClock.now - started < .seconds(5))
            let helper = try Support.helper(["open", group])
            #expect(helper.stdout == "error collectionLocked\n", "\(helper.stderr)")
            // The generation is a local atomic load: still answers, unchanged.
            #expect(store.currentGeneration() == generation)
            // Attributes stay searchable while locked (which is why they carry nothing private).
            #expect(try client.count(matching: ["group": group]) == 2)

            // gnome-keyring needs a prompt to unlock the login collection; without interaction the
            // prompt is dismissed unseen.
            let refused = #expect(throws: TokenCacheError.self) { try client.unlockDefaultCollection(allowInteraction: false) }
            #expect(refused?.code == .interactionNotAllowed)
            #expect(try client.isDefaultCollectionLocked())

            try Support.unlockTestKeyring()
            unlocked = true
            #expect(try Support.payloads(store.load().0) == expected)
            #expect(try Support.payloads(KeyringStore(group: group).load().0) == expected)
            #expect(try Support.helper(["get", group, "rt"]).stdout == "ok refresh\n")
        }

        /// A daemon that stops answering (paused with SIGSTOP) gives keyringTimeout within the
        /// configured limit, never a hang; once it resumes, everything is still there.
        @Test func aStalledServiceTimesOut() throws {
            let (group, store, expected) = try populatedGroup("stalled")
            let pid = try Support.secretServicePid()
            try #require(kill(pid, SIGSTOP) == 0)
            var resumed = false
            defer { if !resumed { kill(pid, SIGCONT) } }

            let client = KeyringClient(options: KeyringOptions(callTimeout: .seconds(1), probeTimeout: .seconds(1)))
            let started = ContinuousClock.now
            let error = #expect(throws: TokenCacheError.self) {
                try client.withSecret(attributes: ["group": group, "role": "records"]) { $0.count }
            }
            #expect(error?.code == .keyringTimeout, "\(String(describing: error))")
            #expect(ContinuousClock.now - started < .seconds(5))

            let helperStarted = ContinuousClock.now
            let output = try Support.helper(["--call-timeout-ms", "1000", "--probe-timeout-ms", "1000", "open", group])
            #expect(output.stdout == "error keyringTimeout\n", "\(output.stderr)")
            #expect(ContinuousClock.now - helperStarted < .seconds(8))

            // A group opened in the keyring takes its limit from the configuration (the default,
            // 10 s, would overrun the bound below).
            var configuration = CacheConfiguration(store: .keyring)
            configuration.keyringTimeout = .seconds(1)
            KeyringClient.forgetServiceConnection()
            let groupStarted = ContinuousClock.now
            let opened = #expect(throws: TokenCacheError.self) {
                _ = try CacheGroup.open(group, configuration: configuration).entries()
            }
            #expect(opened?.code == .keyringTimeout, "\(String(describing: opened))")
            #expect(ContinuousClock.now - groupStarted < .seconds(8))

            kill(pid, SIGCONT)
            resumed = true
            #expect(try Support.payloads(store.load().0) == expected)
        }
    }
}
