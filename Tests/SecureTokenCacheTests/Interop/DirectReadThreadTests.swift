import Dispatch
import Synchronization
import Testing

@testable import SecureTokenCache

/// ``DirectRead`` with a large document's second half on another thread (``BackgroundJob``): the
/// records are what one read gives, also while many reads compete for the threads, so that some
/// take their second half back before any thread began it and read it themselves. The suite runs
/// under ThreadSanitizer too (`scripts/sanitize thread`).
@Suite(.timeLimit(.minutes(2))) struct DirectReadThreadTests {
    /// An MSAL document past ``DirectRead/twoHalvesThreshold``: 1,600 access tokens, then a section
    /// the library does not know.
    static let document: [UInt8] = {
        var entries: [String] = []
        for user in 0..<400 {
            for scope in 0..<4 {
                entries.append(
                    #""u\#(user).t-login.microsoftonline.com-accesstoken-c-t-s\#(scope)": {"credential_type": "AccessToken", "secret": "at-\#(user)-\#(scope)-\#(String(repeating: "x", count: 100))", "home_account_id": "u\#(user).t", "environment": "login.microsoftonline.com", "client_id": "c", "target": "S\#(scope)", "realm": "t", "expires_on": "4000000000"}"#
                )
            }
        }
        return Array(#"{"AccessToken": {\#(entries.joined(separator: ",\n"))}, "Extra": 1}"#.utf8)
    }()

    /// What one read of ``document`` gives.
    static func wholeRead() throws -> [String] {
        let whole = try Self.document.withUnsafeBufferPointer { try DirectRead.records(of: $0, secondHalfAt: nil) }
        return DirectReadTests.summary(try #require(whole))
    }

    @Test func aLargeDocumentIsReadInTwoHalvesAsInOne() throws {
        let document = Self.document
        #expect(document.count >= DirectRead.twoHalvesThreshold)
        let guess = try #require(
            document.withUnsafeBufferPointer { DirectRead.guessedEntryKey(in: $0, from: $0.count / 2) })
        #expect(document[guess] == UInt8(ascii: "\""))
        let halves = try #require(try document.withUnsafeBufferPointer { try DirectRead.records(of: $0) })
        #expect(halves.entries.count == 1600)
        #expect(DirectReadTests.summary(halves) == (try Self.wholeRead()))
    }

    @Test func readsOnManyThreadsAtOnceGiveWhatOneReadGives() throws {
        let whole = try Self.wholeRead()
        let differing = Atomic(0)
        let failed = Atomic(0)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            do {
                let read = try Self.document.withUnsafeBufferPointer { try DirectRead.records(of: $0) }
                if read.map(DirectReadTests.summary) != whole { differing.add(1, ordering: .relaxed) }
            } catch {
                failed.add(1, ordering: .relaxed)
            }
        }
        #expect(differing.load(ordering: .relaxed) == 0)
        #expect(failed.load(ordering: .relaxed) == 0)
    }
}
