import Foundation
import Testing

@testable import SecureTokenCache

/// Reading a shared document into records: the same records a whole import makes, and after a
/// rewrite by another tool, only what changed.
@Suite(.timeLimit(.minutes(1))) struct SharedDocumentRecordsTests {
    /// What a whole import of `bytes` files, exported again.
    static func exported(_ records: [Record]) throws -> [UInt8] {
        MSALDocument.export(try RecordCodec.build(records), includeSecrets: true)
    }

    @Test(arguments: Fixtures.vectorNames) func aFirstReadHoldsTheWholeDocument(name: String) throws {
        let vector = try Fixtures.vector(name)
        var document = SharedDocumentRecords()
        let changes = try document.read(vector, location: "test")
        #expect(changes.count == document.records.count)
        #expect(try Self.exported(document.records) == vector)
    }

    @Test(arguments: Fixtures.vectorNames) func aRewriteReportsOnlyTheEntriesThatChanged(name: String) throws {
        let vector = try Fixtures.vector(name)
        var document = SharedDocumentRecords()
        _ = try document.read(vector, location: "test")
        #expect(try document.read(vector, location: "test").isEmpty, "an identical document changed something")

        // Another tool changes one access token's secret and removes one account.
        let group = try Fixtures.group()
        try group.importMSAL(vector)
        let index = try group.index()
        let token = try #require(index.entries.values.first { $0.id.kind == .accessToken })
        let account = try #require(index.entries.values.first { $0.id.kind == .account })
        var rewritten = try MSALDocument.parse(vector)
        for position in rewritten.sections.indices {
            guard case .entries(let kind, var entries) = rewritten.sections[position].content else { continue }
            entries.removeAll { $0.key == account.id.key && kind == .account }
            for entry in entries.indices where entries[entry].key == token.id.key && kind == .accessToken {
                entries[entry].fields["secret"] = .string("rotated")
            }
            rewritten.sections[position].content = .entries(kind, entries)
        }
        var transaction = IndexTransaction(Index())
        MSALDocument.merge(rewritten, into: &transaction)
        let bytes = MSALDocument.export(transaction.index, includeSecrets: true)
        let changes = try document.read(bytes, location: "test")
        let changed: Set<RecordID> = Set(changes.map(\.id))
        let expected: Set<RecordID> = [RecordCodec.recordID(account.id), RecordCodec.recordID(token.id)]
        #expect(changed == expected)
        #expect(try Self.exported(document.records) == bytes)
    }

    @Test func entriesMovedOutOfOrderAreRewrittenInDocumentOrder() throws {
        let first =
            #"{"AccessToken": {"a": {"secret": "1", "credential_type": "AccessToken"}, "b": {"secret": "2", "credential_type": "AccessToken"}}}"#
        let swapped =
            #"{"AccessToken": {"b": {"secret": "2", "credential_type": "AccessToken"}, "a": {"secret": "1", "credential_type": "AccessToken"}}}"#
        var document = SharedDocumentRecords()
        _ = try document.read(Array(first.utf8), location: "test")
        let changes = try document.read(Array(swapped.utf8), location: "test")
        #expect(!changes.isEmpty)
        let exported = String(decoding: try Self.exported(document.records), as: UTF8.self)
        let b = try #require(exported.range(of: "\"b\""))
        let a = try #require(exported.range(of: "\"a\""))
        #expect(b.lowerBound < a.lowerBound, "the document's order was not kept")
    }

    /// A document of access tokens `tokens` (by key) and one account, as msal-python writes it.
    static func document(tokens: [String]) -> [UInt8] {
        func entry(_ kind: String, _ key: String) -> (key: String, value: JSONValue) {
            (key, .object(JSONObject([("credential_type", .string(kind)), ("secret", .string("secret-\(key)"))])))
        }
        return JSONWriter.bytes(
            .object(
                JSONObject([
                    ("AccessToken", .object(JSONObject(tokens.map { entry("AccessToken", $0) }))),
                    ("RefreshToken", .object(JSONObject([entry("RefreshToken", "r")]))),
                    ("Account", .object(JSONObject([("u", .object(JSONObject([("username", .string("u"))])))]))),
                ])), style: .python)
    }

    /// Another tool inserting entries (msal-python appends them; others may write them anywhere)
    /// changes those entries alone: the entries after them keep their records, in every section.
    @Test func insertedEntriesChangeOnlyThemselvesAndKeepTheDocumentsOrder() throws {
        var records = SharedDocumentRecords()
        _ = try records.read(Self.document(tokens: ["a", "b", "c"]), location: "test")
        for tokens in [["a", "a2", "b", "c", "d"], ["a", "a2", "a3", "b", "c", "d"], ["a0", "a", "a2", "a3", "b", "c", "d"]] {
            let before = Set(records.records.map(\.id))
            let bytes = Self.document(tokens: tokens)
            let changes = try records.read(bytes, location: "test")
            let added = Set(tokens.map { RecordID(kind: .accessToken, name: $0) }).subtracting(before)
            #expect(Set(changes.map(\.id)) == added, "\(tokens)")
            #expect(try Self.exported(records.records) == bytes, "the document's order was not kept")
        }
        // The rest of a section moved by an edit early in it: found by comparing, not parsing.
        let changes = try records.read(Self.document(tokens: ["a0", "b", "c", "d"]), location: "test")
        #expect(Set(changes.map(\.id)) == Set(["a", "a2", "a3"].map { RecordID(kind: .accessToken, name: $0) }))
    }

    /// Another tool writing the same entries with other spacing between them changes nothing,
    /// and the next rewrite is compared where its entries now are.
    @Test func aDocumentRespacedChangesNothingAndTheNextEditIsFound() throws {
        // Entries one line apart instead of msal-python's line and indent; their own bytes alike.
        func respaced(_ tokens: [String]) -> [UInt8] {
            let text = String(decoding: Self.document(tokens: tokens), as: UTF8.self)
            return Array(text.replacingOccurrences(of: ",\n        \"", with: ",\n\"").utf8)
        }
        var records = SharedDocumentRecords()
        _ = try records.read(Self.document(tokens: ["a", "b", "c"]), location: "test")
        #expect(respaced(["a", "b", "c"]) != Self.document(tokens: ["a", "b", "c"]))
        #expect(try records.read(respaced(["a", "b", "c"]), location: "test").isEmpty)
        let changes = try records.read(respaced(["a", "b2", "c"]), location: "test")
        #expect(Set(changes.map(\.id)) == Set(["b", "b2"].map { RecordID(kind: .accessToken, name: $0) }))
        #expect(try Self.exported(records.records) == Self.document(tokens: ["a", "b2", "c"]))
    }

    /// A repeated key (found by fuzzing: a repeated unknown section was written back twice) is
    /// read as a whole import reads it: once, at its first position, with its last value.
    @Test(arguments: [
        #"{"":{},"":{}}"#,
        #"{"X": 1, "AccessToken": {}, "X": 2}"#,
        #"{"AccessToken": {"a": {"secret": "1"}, "b": {"secret": "2"}, "a": {"secret": "3"}}}"#,
        #"{"AccessToken": {"a": {"secret": "1"}}, "Account": {}, "AccessToken": {"b": {"secret": "2"}}}"#,
    ])
    func repeatedKeysAreReadAsAWholeImportReadsThem(document: String) throws {
        var records = SharedDocumentRecords()
        _ = try records.read(Array(document.utf8), location: "test")
        var transaction = IndexTransaction(Index())
        MSALDocument.merge(try MSALDocument.parse(Array(document.utf8)), into: &transaction)
        #expect(try Self.exported(records.records) == MSALDocument.export(transaction.index, includeSecrets: true))
    }

    @Test(arguments: [
        #"{"AccessToken": {"a": {"secret": "1"}"#, #"{"AccessToken": {"a": [1]}}"#, #"{"AccessToken": []}"#, "[]",
        #"{"AccessToken": {"a": {"secret": "1}}}"#, #"{"AccessToken": {}} x"#, #"{"Account": {"k": {"x": tru}}}"#,
        #"{"AccessToken": {"a": {"x": [}]}}}"#, #"{"Ref":{x},"Ref":{}}"#,
        #"{"AccessToken": {"a": {"x": tru}, "a": {}}}"#,
    ])
    func aDamagedDocumentIsATypedErrorAndChangesNothing(damaged: String) throws {
        var document = SharedDocumentRecords()
        let vector = try Fixtures.vector(Fixtures.vectorNames[0])
        _ = try document.read(vector, location: "here")
        do {
            _ = try document.read(Array(damaged.utf8), location: "here")
            Issue.record("\(damaged) was read")
        } catch let error as TokenCacheError {
            #expect(error.code == .malformedCache)
            #expect(error.message.contains("here"))
        }
        #expect(try Self.exported(document.records) == vector)
    }
}
