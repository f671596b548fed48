import Foundation
import Testing

@testable import SecureTokenCache

/// ``DirectRead`` reads a large document in two halves at once, the second from a guess at where
/// an entry's key starts: wherever that guess falls (an entry's key, a section's name, inside a
/// string, a nested object or an unknown section), the records, or the error, are what one read
/// of the whole document gives.
// Three minutes: tens of seconds alone under AddressSanitizer, and CI runs that pass at nice 19
// beside the main suite, where it takes several times longer.
@Suite(.timeLimit(.minutes(3))) struct DirectReadTests {
    /// A document with what could mislead a guess: `}, "` inside strings and keys, nested objects
    /// in entries, an unknown section between sections of entries, sections of each kind, and a
    /// key with an escape.
    static let tricky = #"""
        {
            "AccessToken": {
                "u.t-login.microsoftonline.com-accesstoken-c-t-a b": {"credential_type": "AccessToken", "secret": "x}, \"y", "home_account_id": "u.t", "environment": "login.microsoftonline.com", "client_id": "c", "target": "A B", "realm": "t"},
                "k}, \"2": {"secret": "2", "ext": {"a": {"b": 1}, "c": "}, \""}, "n": [{"d": 2}, {"e": 3}]},
                "u.t-login.microsoftonline.com-accesstoken-c-t-c": {"credential_type": "AccessToken", "secret": "3", "home_account_id": "u.t", "environment": "login.microsoftonline.com", "client_id": "c", "target": "c", "realm": "t"},
                "k\u0034": {"secret": "4"}
            },
            "Extra": {"x": {"y": "z"}, "w": [1, 2]},
            "Account": {
                "u.t-login.microsoftonline.com-t": {"home_account_id": "u.t", "environment": "login.microsoftonline.com", "realm": "t", "username": "a@b"},
                "other": {"home_account_id": "v.t", "username": "}, \"x"}
            },
            "IdToken": {"i": {"secret": "e30"}, "j": {"secret": "e31"}},
            "RefreshToken": {"r": {"secret": "1", "family_id": "1"}, "s": {"secret": "2"}},
            "AppMetadata": {"m": {"client_id": "c"}}
        }
        """#

    static let documents: [[UInt8]] =
        [Array(tricky.utf8)] + Fixtures.vectorNames.map { try! Fixtures.vector($0) }

    @Test(arguments: 0..<documents.count)
    func readsInTwoHalvesWhatOneReadGives(document: Int) throws {
        let bytes = Self.documents[document]
        let whole = try bytes.withUnsafeBufferPointer { try DirectRead.records(of: $0, secondHalfAt: nil) }
        let expected = try #require(whole)
        // Every quote (where an entry's key, and so a second half, can start), and bytes between.
        for guess in bytes.indices where bytes[guess] == UInt8(ascii: "\"") || guess % 7 == 0 {
            let halves = try bytes.withUnsafeBufferPointer {
                try DirectRead.records(of: $0, secondHalfAt: guess, secondHalfFirst: true)
            }
            let read = try #require(halves, "second half at byte \(guess)")
            #expect(Self.summary(read) == Self.summary(expected), "second half at byte \(guess)")
        }
    }

    /// Damage in either half (a byte that breaks the JSON, a repeated section) gives what one
    /// read gives, wherever the second half starts.
    @Test(arguments: [
        (#""secret": "3""#, #""secret": 3x"#),
        (#""IdToken": {"#, #""Account": {"#),
        (#""AppMetadata": {"m": {"client_id": "c"}}"#, #""AppMetadata": {"m": {"client_id": "c"}"#),
        (#""k}, \"2": {"secret": "2""#, #""k}, \"2": {"secret": "2"]"#),
    ])
    func damageGivesWhatOneReadGives(original: String, damaged: String) throws {
        let text = Self.tricky.replacingOccurrences(of: original, with: damaged)
        #expect(text != Self.tricky)
        let bytes = Array(text.utf8)
        let whole = Self.outcome(bytes, secondHalfAt: nil)
        #expect(whole != Self.outcome(Array(Self.tricky.utf8), secondHalfAt: nil))
        for guess in bytes.indices where bytes[guess] == UInt8(ascii: "\"") || guess % 7 == 0 {
            #expect(Self.outcome(bytes, secondHalfAt: guess) == whole, "second half at byte \(guess)")
        }
    }

    /// The records' ids, payloads and sections, to compare two reads.
    static func summary(_ records: MSALDocument.Records) -> [String] {
        records.entries.map { "\($0.id.kind) \($0.id.name) \(Array($0.payload))" }
            + records.sections.map { "\($0.name): \($0.content)" }
    }

    /// What a read of `bytes` gives: its records' summary, `nil` for none, or its error.
    static func outcome(_ bytes: [UInt8], secondHalfAt guess: Int?) -> String {
        do {
            let read = try bytes.withUnsafeBufferPointer {
                try DirectRead.records(of: $0, secondHalfAt: guess, secondHalfFirst: true)
            }
            return read.map { summary($0).joined(separator: "\n") } ?? "nil"
        } catch {
            return "error: \(error)"
        }
    }
}
