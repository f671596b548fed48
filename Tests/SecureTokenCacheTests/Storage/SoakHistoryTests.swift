import Foundation
import Testing

@testable import SecureTokenCache

/// The soak's checker (``SoakHistory``) on made-up journals: it passes what a correct group may
/// do and catches each kind of failure the soak is there to find.
@Suite struct SoakHistoryTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var testDescription: String
        /// Worker 0's journal, and worker 1's.
        var journal: [String]
        var other: [String] = []
        /// What the final read prints.
        var final: [String]
        var failures: Int
    }

    /// Worker 0 stores `at-0-0-1` into register (0, 0, 0) and sees it, then `at-0-0-3`.
    static let stores = [
        "start 0 7 0 1 0", "put 0 0 at-0-0-1 10", "ack 1 1 20", "get 0 0 0 at-0-0-1 30 40 1 1", "put 0 0 at-0-0-3 50",
        "ack 2 1 60",
    ]

    static let cases = [
        Case(testDescription: "a correct run", journal: stores, final: ["register 0 0 0 at-0-0-3", "cursor 2 1"], failures: 0),
        Case(
            testDescription: "an acknowledged store lost", journal: stores, final: ["register 0 0 0 at-0-0-1", "cursor 2 1"],
            failures: 1),
        Case(
            testDescription: "a lookup of an overwritten token",
            journal: stores + ["get 0 0 0 at-0-0-1 70 80 2 1"], final: ["register 0 0 0 at-0-0-3", "cursor 2 1"], failures: 1),
        Case(
            testDescription: "a token nobody stored",
            journal: stores + ["get 0 0 1 at-0-0-3 70 80 2 1"], final: ["register 0 0 0 at-0-0-3", "cursor 2 1"], failures: 1),
        Case(
            testDescription: "a store interrupted by a kill, committed",
            journal: stores + ["put 0 0 at-0-0-5 70", "start 1 8 3 1 90", "get 0 0 0 at-0-0-5 100 110 3 1"],
            final: ["register 0 0 0 at-0-0-5", "cursor 3 1"], failures: 0),
        Case(
            testDescription: "a store interrupted by a kill, not committed",
            journal: stores + ["put 0 0 at-0-0-5 70", "start 1 8 2 1 90", "get 0 0 0 at-0-0-3 100 110 2 1"],
            final: ["register 0 0 0 at-0-0-3", "cursor 2 1"], failures: 0),
        Case(
            testDescription: "an interrupted store found, then undone",
            journal: stores + [
                "put 0 0 at-0-0-5 70", "start 1 8 3 1 90", "get 0 0 0 at-0-0-5 100 110 3 1", "get 0 0 0 at-0-0-3 120 130 3 1",
            ], final: ["register 0 0 0 at-0-0-5", "cursor 3 1"], failures: 1),
        Case(
            testDescription: "an interrupted store showing after a later one returned",
            journal: stores + ["put 0 0 at-0-0-5 70", "start 1 8 2 1 90", "put 0 0 at-1-0-0 100", "ack 3 1 110"],
            final: ["register 0 0 0 at-0-0-5", "cursor 3 1"], failures: 1),
        Case(
            testDescription: "a token after its sign-out returned",
            journal: stores + ["signout 0 70", "ack 3 1 80", "get 0 0 0 at-0-0-3 90 100 3 1"],
            final: ["register 0 0 0 -", "cursor 3 1"], failures: 1),
        Case(
            // Both behind the process's own last snapshot and behind every snapshot taken before.
            testDescription: "a generation going back",
            journal: stores + ["get 0 0 0 at-0-0-3 70 80 1 1"], final: ["register 0 0 0 at-0-0-3", "cursor 2 1"], failures: 2),
        Case(
            testDescription: "a process older than another before it", journal: stores,
            other: ["start 0 9 1 1 45", "get 0 0 0 at-0-0-3 70 80 1 1"], final: ["register 0 0 0 at-0-0-3", "cursor 2 1"],
            failures: 1),
        Case(
            testDescription: "a store that did not move the generation",
            journal: stores + ["put 0 0 at-0-0-7 70", "ack 2 1 80"], final: ["register 0 0 0 at-0-0-7", "cursor 3 1"],
            failures: 1),
        Case(
            testDescription: "a group that ends before its acknowledged stores",
            journal: stores, final: ["register 0 0 0 at-0-0-3", "cursor 1 1"], failures: 1),
    ]

    @Test(arguments: cases) func checks(_ soak: Case) throws {
        let folder = TemporaryDirectory()
        let journals = try [soak.journal, soak.other].enumerated().map { worker, lines in
            let path = folder.path + "/journal-\(worker)"
            try Data(lines.map { $0 + "\n" }.joined().utf8).write(to: URL(fileURLWithPath: path))
            var journal = SoakJournal(path: path, worker: worker)
            try journal.read()
            return journal
        }
        let checks = SoakHistory(journals: journals).check(final: soak.final)
        #expect(checks.failures == soak.failures, "\(checks.failed)")
    }
}
