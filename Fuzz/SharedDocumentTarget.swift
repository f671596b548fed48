/// ``SharedDocumentRecords/read(_:location:)`` on documents another tool could have written:
/// the input holds one document, or two cut by a NUL byte (a document and its rewrite).
///
/// Properties:
/// - a read either throws `.malformedCache` and leaves the records as they were, or its records
///   export what a whole import (``MSALDocument`` parse and merge) of the same bytes exports,
///   leaving out the extras section, which a whole import keeps as an unknown one;
/// - the changes a read returns, applied to the records before it, give the records after it;
/// - reading the rewrite after the first document gives the records a fresh read of it gives.
enum SharedDocumentTarget {
    static func check(_ input: [UInt8]) {
        let documents = FuzzProperty.parts(input).prefix(2)
        var incremental = SharedDocumentRecords()
        for document in documents {
            let before = incremental.records
            do {
                let changes = try incremental.read(document, location: "fuzz")
                var expected = contents(before)
                for change in changes {
                    switch change {
                    case .put(let record): expected[record.id] = Array(record.payload)
                    case .delete(let id): expected[id] = nil
                    }
                }
                FuzzProperty.require(
                    contents(incremental.records) == expected, "a read's changes do not lead to its records")
            } catch {
                FuzzProperty.requireTyped(error, [.malformedCache], "read")
                FuzzProperty.require(contents(incremental.records) == contents(before), "a failed read changed the records")
                // The extras section has a shape of its own, which a whole import does not check.
                if let whole = wholeImport(document) {
                    FuzzProperty.require(whole.hasExtras, "a whole import accepts what a read refuses")
                }
                continue
            }
            let whole = wholeImport(document)
            FuzzProperty.require(whole != nil, "a read accepts what a whole import refuses")
            FuzzProperty.require(
                exported(incremental.records) == whole?.exported, "the records export other bytes than a whole import")
            var fresh = SharedDocumentRecords()
            guard (try? fresh.read(document, location: "fuzz")) != nil else {
                FuzzProperty.require(false, "a fresh read refuses what a read after another document accepted")
                return
            }
            FuzzProperty.require(
                exported(fresh.records) == exported(incremental.records)
                    && Set(contents(fresh.records).keys) == Set(contents(incremental.records).keys),
                "reading after another document gives other records than a fresh read")
        }
    }

    /// The records by id, each once.
    static func contents(_ records: [Record]) -> [RecordID: [UInt8]] {
        var result: [RecordID: [UInt8]] = [:]
        for record in records {
            FuzzProperty.require(result.updateValue(Array(record.payload), forKey: record.id) == nil, "two records \(record.id)")
        }
        return result
    }

    /// What the engine writes for `records` as an MSAL document (without the extras section).
    static func exported(_ records: [Record]) -> [UInt8] {
        do {
            return MSALDocument.export(try RecordCodec.build(records), includeSecrets: true)
        } catch {
            FuzzProperty.require(false, "the records of a read do not build an index: \(error)")
            return []
        }
    }

    /// What a whole import of `document` exports, without the extras section, and whether it
    /// had one; `nil` when it refuses the document. An empty document is no document: no records.
    static func wholeImport(_ document: [UInt8]) -> (exported: [UInt8], hasExtras: Bool)? {
        var transaction = IndexTransaction(Index())
        var hasExtras = false
        if !document.isEmpty {
            guard var parsed = try? MSALDocument.parse(document) else { return nil }
            hasExtras = parsed.sections.contains { $0.name == SharedCacheStore.extrasSection }
            parsed.sections.removeAll { $0.name == SharedCacheStore.extrasSection }
            MSALDocument.merge(parsed, into: &transaction)
        }
        return (MSALDocument.export(transaction.index, includeSecrets: true), hasExtras)
    }
}
