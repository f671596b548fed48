import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

extension KeyringTests {
    /// Two processes sharing one keyring group (the second is `stc-keyring-helper`).
    @Suite(.tags(.multiProcess)) struct MultiProcess {
        typealias Support = KeyringTestSupport

        @Test func twoProcessesSeeEachOthersWrites() throws {
            let group = Support.uniqueGroup("processes")
            let store = try KeyringStore(group: group)
            let mine = try store.transact(since: .start) { _ in [.put(Support.record("from-test", "written by the test"))] }

            let read = try Support.helper(["get", group, "from-test"])
            #expect(read.stdout == "ok written by the test\n", "\(read.stderr)")

            let wrote = try Support.helper(["put", group, "from-helper", "written by the helper"])
            #expect(wrote.stdout == "ok generation 2\n", "\(wrote.stderr)")
            // The other process's commit shows as a new generation (one atomic load) ...
            #expect(store.currentGeneration() == 2)
            // ... and the next update brings exactly its transaction, from the journal (no D-Bus).
            let reads = store.itemReads
            let update = try store.update(since: mine)
            #expect(update.cursor.generation == 2)
            guard case .changes(let changes, _) = update else {
                Issue.record("expected the other process's changes from the journal, got \(update)")
                return
            }
            #expect(Support.describe(changes) == ["put from-helper=written by the helper"])
            #expect(store.itemReads == reads)
        }

        /// Writers in several processes at once lose nothing: the group lock serialises them.
        @Test func concurrentWritersLoseNoUpdate() async throws {
            let group = Support.uniqueGroup("writers")
            let store = try KeyringStore(group: group)
            let path = Support.helperPath
            try #require(FileManager.default.isExecutableFile(atPath: path))
            try await withThrowingTaskGroup(of: Support.Output.self) { tasks in
                for process in 0..<3 {
                    tasks.addTask {
                        var last = Support.Output(status: 0, stdout: "", stderr: "")
                        for i in 0..<4 {
                            last = try Support.run(path, ["put", group, "p\(process)-\(i)", "v\(process)-\(i)"])
                            if last.status != 0 { return last }
                        }
                        return last
                    }
                }
                for _ in 0..<4 {
                    _ = try store.transact(since: .start) { _ in
                        [.put(Support.record("parent-\(UUID().uuidString.prefix(4))", "p"))]
                    }
                }
                for try await output in tasks {
                    #expect(output.status == 0, "\(output.stdout) \(output.stderr)")
                }
            }
            let (records, cursor) = try store.load()
            #expect(records.count == 16)
            #expect(cursor.generation == 16)
            #expect(store.currentGeneration() == 16)
        }
    }
}
