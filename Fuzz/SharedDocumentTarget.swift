/// ``SharedDocumentRecords/read(_:location:)`` on documents another tool could have written, as
/// a keyring item of either dialect holds them (``SharedKeyringMedium/decode(_:)``): the input
/// holds one item's contents, or two cut by a NUL byte (a document and its rewrite). Contents
/// that start as a JSON object (or are empty) are a document as the raw dialect holds it, which
/// the target also wraps in Base64 as the .NET, Java and Go extensions store it; any other
/// contents are read as that Base64 dialect's item, so mutations reach its decoder.
///
/// Properties:
/// - a document wrapped in Base64 decodes to itself in the Base64 dialect; Base64 contents decode
///   to a document that encodes and decodes back to itself, or fail with `.malformedCache`; and
///   the raw dialect refuses contents with `.malformedCache` exactly when they are Base64 of a
///   JSON object (the other dialect's item), taking any other contents as they are;
/// - a read either throws `.malformedCache` and leaves the records as they were, or its records
///   export what a whole import (``MSALDocument`` parse and merge) of the same bytes exports,
///   leaving out the extras section, which a whole import keeps as an unknown one;
/// - the changes a read returns, applied to the records before it, give the records after it;
/// - reading the rewrite after the first document gives the records a fresh read of it gives.
enum SharedDocumentTarget {
    static func check(_ input: [UInt8]) {
        let items = FuzzProperty.parts(input).prefix(2)
        var incremental = SharedDocumentRecords()
        for item in items {
            guard let document = document(in: item) else { continue }
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

    /// The item of each dialect: only their decoding is used, which touches no keyring.
    static let raw = medium(.raw)
    static let base64 = medium(.base64)

    static func medium(_ encoding: MSALSharedCache.Encoding) -> SharedKeyringMedium {
        let item = MSALSharedCache.KeyringItem(
            schema: "fuzz.cache", attributes: ["fuzz": "1"], label: "fuzz", encoding: encoding,
            signalFile: "/nonexistent/fuzz.signal")
        return try! SharedKeyringMedium(item, options: KeyringOptions())
    }

    /// The document an item holding `item` gives (see the type's description), checking both
    /// dialects' decoding on the way; `nil` when the Base64 dialect refuses the item.
    static func document(in item: [UInt8]) -> [UInt8]? {
        let isDocument =
            SharedKeyringMedium.looksLikeJSONObject(item) || item.allSatisfy { [0x20, 0x09, 0x0A, 0x0D].contains($0) }
        let wrapped = isDocument ? Array(SharedKeyringMedium.base64(item).utf8) : item
        let decoded: [UInt8]
        do {
            decoded = try base64.decode(wrapped)
        } catch {
            FuzzProperty.requireTyped(error, [.malformedCache], "decoding a Base64 item")
            FuzzProperty.require(!isDocument, "a document wrapped in Base64 does not decode")
            checkRawDialect(wrapped, wrapsObject: false)
            return nil
        }
        if isDocument {
            FuzzProperty.require(decoded == item, "a document wrapped in Base64 decodes to other bytes")
        } else {
            let again = try? base64.decode(Array(SharedKeyringMedium.base64(decoded).utf8))
            FuzzProperty.require(again == decoded, "what a Base64 item decodes to does not encode and decode to itself")
        }
        checkRawDialect(wrapped, wrapsObject: SharedKeyringMedium.looksLikeJSONObject(decoded))
        return decoded
    }

    /// The raw dialect on `wrapped`, Base64 contents: it refuses them exactly when they wrap a
    /// JSON object, and otherwise takes them as they are.
    static func checkRawDialect(_ wrapped: [UInt8], wrapsObject: Bool) {
        do {
            let taken = try raw.decode(wrapped)
            FuzzProperty.require(!wrapsObject, "the raw dialect takes Base64 of a JSON object")
            FuzzProperty.require(taken == wrapped, "the raw dialect changes what it takes")
        } catch {
            FuzzProperty.requireTyped(error, [.malformedCache], "the raw dialect on a Base64 item")
            FuzzProperty.require(wrapsObject, "the raw dialect refuses Base64 that holds no JSON object")
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
