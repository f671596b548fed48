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

    /// Merges a parsed document into a transaction: entries are filed under their own keys
    /// (an entry under an existing key replaces it in place), unknown sections are kept.
    static func merge(_ parsed: Parsed, into transaction: inout IndexTransaction) {
        var names = transaction.index.sections
        for (name, _) in parsed.sections {
            let kind = CredentialKind(sectionName: name)
            let present = names.contains { $0 == name || (kind != nil && CredentialKind(sectionName: $0) == kind) }
            if !present { names.append(name) }
        }
        transaction.setSections(names)
        // Entries share their accounts, clouds, clients, tenants and scopes: parse each once.
        var sharing = StringInterner()
        var all: [(entry: CacheEntry, key: String)] = []
        all.reserveCapacity(parsed.entryCount)
        for (name, content) in parsed.sections {
            switch content {
            case .unknown(let value):
                transaction.setUnknownSection(name, value)
            case .entries(let kind, let entries):
                for (key, fields) in entries {
                    var parts = EntryParts(fields)
                    parts.share(with: &sharing)
                    all.append((entry: CacheEntry(kind: kind, members: .object(fields), parts: parts), key: key))
                }
            }
        }
        transaction.putAll(all)
    }

    /// The bytes msal-python's `serialize()` would write for the index's contents.
    ///
    /// - Parameter includeSecrets: when `false`, every `secret` member is left out.
    static func export(_ index: Index, includeSecrets: Bool = true) -> [UInt8] {
        var byKind: [CredentialKind: [StoredEntry]] = [:]
        for stored in index.entries.values { byKind[stored.id.kind, default: []].append(stored) }
        var names = index.sections
        for kind in CredentialKind.allCases.sorted() where byKind[kind] != nil {
            if !names.contains(where: { CredentialKind(sectionName: $0) == kind }) { names.append(kind.sectionName) }
        }
        var written = Set<CredentialKind>()
        var document = JSONObject()
        for name in names {
            if let kind = CredentialKind(sectionName: name) {
                // Two spellings of one section (IdToken/IDToken) merge into the first.
                guard written.insert(kind).inserted else { continue }
                let entries = (byKind[kind] ?? []).sorted { $0.ordinal < $1.ordinal }
                var section = JSONObject()
                for stored in entries {
                    var fields = stored.entry.fields
                    if !includeSecrets { fields["secret"] = nil }
                    section.appendUnchecked(key: stored.id.key, value: .object(fields))
                }
                document.appendUnchecked(key: name, value: .object(section))
            } else if let value = index.unknownSections[name] {
                document.appendUnchecked(key: name, value: value)
            }
        }
        return JSONWriter.bytes(.object(document), style: .python)
    }
}
