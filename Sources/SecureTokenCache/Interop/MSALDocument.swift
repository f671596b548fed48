import HashTreeCollections

/// Reads and writes MSAL unified-cache JSON documents.
///
/// Reading accepts what every MSAL SDK writes: any key shape (entries are indexed by their
/// fields, never by parsing keys), timestamps as strings or numbers, `IdToken`/`IDToken`
/// sections, `ext_expires_on`, unknown fields and unknown sections (kept verbatim). Writing
/// produces exactly the bytes msal-python 1.39.0's `serialize()` would for the same cache.
enum MSALDocument {
    /// One parsed document: its sections in order, each either entries or an unknown value.
    struct Parsed {
        enum Section {
            case entries(CredentialKind, [(key: String, fields: JSONObject)])
            case unknown(JSONValue)
        }

        var sections: [(name: String, content: Section)]

        var entryCount: Int {
            sections.reduce(0) { total, section in
                if case .entries(_, let entries) = section.content { return total + entries.count }
                return total
            }
        }
    }

    /// Parses an MSAL JSON cache. Throws `.malformedCache` (naming the section, never a value)
    /// when the document is not a JSON object or a known section is not an object of objects.
    static func parse(_ bytes: some Collection<UInt8>) throws -> Parsed {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch let error as TokenCacheError {
            throw TokenCacheError(.malformedCache, "the file is not valid JSON (\(error.message)); nothing was imported")
        }
        guard case .object(let document) = value else {
            throw TokenCacheError(.malformedCache, "an MSAL cache must be a JSON object; nothing was imported")
        }
        var sections: [(name: String, content: Parsed.Section)] = []
        for (name, content) in document {
            guard let kind = CredentialKind(sectionName: name) else {
                sections.append((name: name, content: .unknown(content)))
                continue
            }
            guard case .object(let members) = content else {
                throw TokenCacheError(.malformedCache, "section \"\(name)\" is not a JSON object; nothing was imported")
            }
            var entries: [(key: String, fields: JSONObject)] = []
            entries.reserveCapacity(members.count)
            for (key, entry) in members {
                guard case .object(let fields) = entry else {
                    throw TokenCacheError(
                        .malformedCache, "an entry of section \"\(name)\" is not a JSON object; nothing was imported")
                }
                entries.append((key: key, fields: fields))
            }
            sections.append((name: name, content: .entries(kind, entries)))
        }
        return Parsed(sections: sections)
    }

    /// A document read into what an import files: its sections in order, and its entries as
    /// records (payloads whose ordinals count from 1 in document order).
    struct Records {
        enum Section {
            /// The entries of a section of entries: a range of ``entries``.
            case entries(CredentialKind, Range<Int>)
            case unknown(JSONValue)
        }

        var sections: [(name: String, content: Section)]
        var entries: [Record]
        /// Each entry's key's ``StringHash``, where the read computed them (``DirectRead`` has
        /// each key's bytes at hand; a key it holds as its payload would be made again to be
        /// hashed).
        var keyHashes: [Int]? = nil

        /// The number of entries the document holds (an entry under a key its section repeats
        /// counted once).
        var entryCount: Int {
            sections.reduce(0) { total, section in
                guard case .entries(_, let range) = section.content else { return total }
                return total + Set(entries[range].map(\.id)).count
            }
        }
    }

    /// Reads an MSAL JSON cache into records, checking it as ``parse(_:)`` does and throwing what
    /// it throws.
    ///
    /// The bytes go straight to the records' payloads, without a tree of the document between
    /// (``EntryPayload/read(_:ordinal:members:order:into:)``). What the whole parse reads otherwise (a
    /// repeated section, or member in an entry) and every error are left to ``parse(_:)``.
    static func read(_ bytes: some Collection<UInt8>) throws -> Records {
        if let read = try bytes.withContiguousStorageIfAvailable({ try read($0) }) { return read }
        return try Array(bytes).withUnsafeBufferPointer { try read($0) }
    }

    private static func read(_ buffer: UnsafeBufferPointer<UInt8>) throws -> Records {
        if let read = try? readDirectly(buffer) { return read }
        // The whole parse keeps one member of a repeated name, as Python's json does; an import
        // refuses one instead, before anything is filed.
        try checkNoRepeatedName(buffer)
        return records(of: try parse(buffer))
    }

    /// Throws `.malformedCache` with the byte offset of the first name that an object of the
    /// document's MSAL layout repeats (a section, an entry's key within its section, a member of
    /// an entry): two values under one name are a damaged or hand-merged file, and which of the
    /// two is right is for its owner to say. Syntax errors are left to the parse that follows.
    static func checkNoRepeatedName(_ buffer: UnsafeBufferPointer<UInt8>) throws {
        var parser = JSONParser(buffer)
        parser.skipWhitespace()
        guard let repeated = try? firstRepeat(in: &parser, level: .document) else { return }
        throw TokenCacheError(
            .malformedCache,
            "the file repeats \(repeated) (two values under one name: keep the right one and import again); nothing was imported"
        )
    }

    /// Where a repeated name is: which objects of an MSAL document are checked.
    private enum Level {
        case document
        case section(String)
        case entry(String)

        /// What a repeated name is at this level, for the error (never a value or a key).
        var repeatedName: String {
            switch self {
            case .document: "a section name"
            case .section(let name): "an entry's key in section \"\(name)\""
            case .entry(let section): "a member name in an entry of section \"\(section)\""
            }
        }
    }

    /// Reads the value at the parser's position to its end; returns the first repeated name of
    /// an object at `level` or below it, and its byte offset, as soon as it is found.
    private static func firstRepeat(in parser: inout JSONParser, level: Level) throws -> String? {
        guard parser.peek() == UInt8(ascii: "{") else {
            _ = try parser.parseValue()
            return nil
        }
        guard try parser.beginObject() else { return nil }
        var names = Set<String>()
        repeat {
            parser.skipWhitespace()
            let offset = parser.position
            let name = try parser.memberName().string
            guard names.insert(name).inserted else { return "\(level.repeatedName) at byte \(offset)" }
            let inner: Level? =
                switch level {
                case .document: CredentialKind(sectionName: name) != nil ? .section(name) : nil
                case .section(let section): .entry(section)
                case .entry: nil
                }
            if let inner {
                if let found = try firstRepeat(in: &parser, level: inner) { return found }
            } else {
                _ = try parser.parseValue()
            }
        } while try parser.endOfMember()
        return nil
    }

    /// ``read(_:)`` in one pass over the bytes; `nil` for what only the whole parse reads as it
    /// should.
    static func readDirectly(_ buffer: UnsafeBufferPointer<UInt8>) throws -> Records? {
        try DirectRead.records(of: buffer)
    }

    /// The records of a parsed document, as ``read(_:)`` makes them.
    static func records(of parsed: Parsed) -> Records {
        var sections: [(name: String, content: Records.Section)] = []
        var entries: [Record] = []
        entries.reserveCapacity(parsed.entryCount)
        for (name, content) in parsed.sections {
            switch content {
            case .unknown(let value):
                sections.append((name: name, content: .unknown(value)))
            case .entries(let kind, let members):
                let first = entries.count
                for (key, fields) in members {
                    let payload = EntryPayload.encode(
                        ordinal: UInt64(entries.count + 1), members: fields.members,
                        codes: fields.members.map { KnownField(name: $0.key)?.rawValue ?? 0 })
                    entries.append(Record(id: RecordID(kind: RecordCodec.recordKind(kind), name: key), payload: payload))
                }
                sections.append((name: name, content: .entries(kind, first..<entries.count)))
            }
        }
        return Records(sections: sections, entries: entries)
    }

    /// Merges a document's records into a transaction: entries are filed under their own keys
    /// (an entry under an existing key replaces it in place), unknown sections are kept.
    /// Returns the number of entries the document holds.
    @discardableResult
    static func merge(_ document: Records, into transaction: inout IndexTransaction) -> Int {
        merge(document, into: &transaction, repeatedID: {})
    }

    /// ``merge(_:into:)-(Records,_)``, calling `repeatedID` before any entry is filed when filing
    /// them in one pass finds two entries with one id (``IndexTransaction/putAll(_:keyHashes:repeatedID:)``).
    static func merge(
        _ document: Records, into transaction: inout IndexTransaction, repeatedID: () throws -> Void
    ) rethrows -> Int {
        var names = transaction.index.sections
        for (name, _) in document.sections {
            let kind = CredentialKind(sectionName: name)
            let present = names.contains { $0 == name || (kind != nil && CredentialKind(sectionName: $0) == kind) }
            if !present { names.append(name) }
        }
        transaction.setSections(names)
        for (name, content) in document.sections {
            if case .unknown(let value) = content { transaction.setUnknownSection(name, value) }
        }
        // Filed in bulk only when no two entries have one id: then none repeats in a section.
        let inOnePass = try transaction.putAll(document.entries, keyHashes: document.keyHashes, repeatedID: repeatedID)
        return inOnePass ? document.entries.count : document.entryCount
    }

    /// Merges a parsed document into a transaction, as ``merge(_:into:)-(Records,_)`` merges its
    /// records.
    static func merge(_ parsed: Parsed, into transaction: inout IndexTransaction) {
        merge(records(of: parsed), into: &transaction)
    }

    /// The bytes msal-python's `serialize()` would write for the index's contents.
    ///
    /// Written as the index holds each entry: an entry read from a record is written from its
    /// payload, member by member, without making it into an object first.
    ///
    /// - Parameter includeSecrets: when `false`, every `secret` member is left out.
    static func export(_ index: Index, includeSecrets: Bool = true) -> [UInt8] {
        let (byKind, payloadBytes) = index.entries.heldInOrder()
        var names = index.sections
        for kind in CredentialKind.allCases.sorted() where byKind[kind] != nil {
            if !names.contains(where: { CredentialKind(sectionName: $0) == kind }) { names.append(kind.sectionName) }
        }
        // Two spellings of one section (IdToken/IDToken) merge into the first.
        var written = Set<CredentialKind>()
        var sections: [(name: String, kind: CredentialKind?)] = []
        for name in names {
            if let kind = CredentialKind(sectionName: name) {
                if written.insert(kind).inserted { sections.append((name, kind)) }
            } else if index.unknownSections[name] != nil {
                sections.append((name, nil))
            }
        }
        let style = JSONWriter.Style.python
        let omitted: KnownField? = includeSecrets ? nil : .secret
        var output: [UInt8] = []
        // The layout (names, quotes, indentation, each entry's key) takes more bytes than the
        // payloads hold. Room for three times them is rarely outgrown, and growing is dear for a
        // large export: what was written is copied into a new buffer, whose every page then
        // faults in again. The pages a smaller document leaves unwritten are never faulted in.
        output.reserveCapacity(3 * payloadBytes + 4096)
        HugePages.advise(&output)
        var nextSection = sections.makeIterator()
        JSONWriter.writeContainer(count: sections.count, brackets: ("{", "}"), style: style, level: 0, into: &output) { output in
            let (name, kind) = nextSection.next()!
            JSONWriter.writeName(name, style: style, into: &output)
            guard let kind else {
                JSONWriter.write(index.unknownSections[name]!, style: style, level: 1, into: &output)
                return
            }
            let places = byKind[kind] ?? []
            var next = places.makeIterator()
            JSONWriter.writeContainer(count: places.count, brackets: ("{", "}"), style: style, level: 1, into: &output) {
                output in
                let entry = index.entries.held(next.next()!)
                entry.id.keyText.withUTF8 { JSONWriter.writeName(utf8: $0, style: style, into: &output) }
                switch entry.members {
                case .payload(let payload):
                    EntryPayload.writeObject(payload, style: style, level: 2, omitting: omitted, into: &output)
                case .object(var fields):
                    if let omitted { fields[omitted.name] = nil }
                    JSONWriter.write(.object(fields), style: style, level: 2, into: &output)
                }
            }
        }
        return output
    }
}
