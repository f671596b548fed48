/// What a shared MSAL document holds, as the records the engine files: one per entry, one per
/// unknown section, the section layout, and what ``SharedCacheStore/extrasSection`` keeps.
///
/// The tools rewrite the whole document for every change, and write unchanged entries with the
/// same bytes. So each record remembers the bytes it was read from, and a read of the next
/// document parses only the entries whose bytes differ (``JSONOutline`` finds them without
/// parsing the rest) and reports only what changed.
///
/// Ordinals (the order the engine writes entries back in) follow the document: an entry keeps
/// its ordinal while that stays in document order, and takes the next one otherwise.
struct SharedDocumentRecords {
    private struct Known {
        var bytes: ArraySlice<UInt8>
        var record: Record
        var ordinal: UInt64
    }

    /// Entries and unknown sections, by record id.
    private var known: [RecordID: Known] = [:]
    /// The layout record.
    private var layout: Record?
    /// The bytes of the extras section and its records.
    private var extras: (bytes: ArraySlice<UInt8>, records: [RecordID: Record])?

    /// Every record, in no particular order.
    var records: [Record] {
        known.values.map(\.record) + (extras.map { Array($0.records.values) } ?? []) + (layout.map { [$0] } ?? [])
    }

    /// Reads `bytes` (a whole document, or none), and returns what changed since the last read:
    /// the records to put and the ids to delete.
    ///
    /// - Throws: ``TokenCacheError/Code/malformedCache`` naming `location` and the section, never
    ///   a value; nothing is changed then.
    mutating func read(_ bytes: [UInt8], location: String) throws -> [RecordChange] {
        do {
            return try read(bytes)
        } catch let error as TokenCacheError where error.code == .malformedCache {
            throw TokenCacheError(
                .malformedCache,
                "the shared cache \(location) is not an MSAL cache document (\(error.message)); nothing was changed. Sign in again with the tool that owns it, or move the damaged document aside"
            )
        }
    }

    private mutating func read(_ bytes: [UInt8]) throws -> [RecordChange] {
        var members: [JSONOutline.Member] = []
        if !bytes.isEmpty {
            guard let top = try JSONOutline.members(of: bytes, in: 0..<bytes.count) else {
                throw TokenCacheError(.malformedCache, "an MSAL cache must be a JSON object")
            }
            members = top
        }
        var next: [RecordID: Known] = [:]
        next.reserveCapacity(known.count)
        var changes: [RecordChange] = []
        var sections: [String] = []
        var sectionKinds = Set<CredentialKind>()
        var nextExtras: (bytes: ArraySlice<UInt8>, records: [RecordID: Record])?
        var sharing = StringInterner()
        var last: UInt64 = 0
        for member in members {
            let value = bytes[member.value]
            if member.key == SharedCacheStore.extrasSection {
                nextExtras = try extras.flatMap { $0.bytes.elementsEqual(value) ? $0 : nil } ?? Self.readExtras(value)
                continue
            }
            guard let kind = CredentialKind(sectionName: member.key) else {
                sections.append(member.key)
                let id = RecordID(kind: .unknownSection, name: member.key)
                if let old = known[id], old.bytes.elementsEqual(value) {
                    next[id] = Known(bytes: value, record: old.record, ordinal: 0)
                } else {
                    let record = RecordCodec.record(unknownSection: member.key, value: try JSONParser.parse(value))
                    next[id] = Known(bytes: value, record: record, ordinal: 0)
                    changes.append(.put(record))
                }
                continue
            }
            if sectionKinds.insert(kind).inserted { sections.append(member.key) }
            guard let entries = try JSONOutline.members(of: bytes, in: member.value) else {
                throw TokenCacheError(.malformedCache, "section \"\(member.key)\" is not a JSON object")
            }
            for entry in entries {
                let id = RecordID(kind: RecordCodec.recordKind(kind), name: entry.key)
                let entryBytes = bytes[entry.value]
                let old = known[id]
                if let old, old.ordinal > last, old.bytes.elementsEqual(entryBytes) {
                    next[id] = Known(bytes: entryBytes, record: old.record, ordinal: old.ordinal)
                    last = old.ordinal
                    continue
                }
                guard case .object(let fields) = try JSONParser.parse(entryBytes) else {
                    throw TokenCacheError(.malformedCache, "an entry of section \"\(member.key)\" is not a JSON object")
                }
                var parts = EntryParts(fields)
                parts.share(with: &sharing)
                let ordinal = old.map(\.ordinal).flatMap { $0 > last ? $0 : nil } ?? last + 1
                let stored = StoredEntry(
                    id: EntryID(kind: kind, key: entry.key), ordinal: ordinal,
                    entry: CacheEntry(kind: kind, members: .object(fields), parts: parts))
                let record = RecordCodec.record(stored)
                next[id] = Known(bytes: entryBytes, record: record, ordinal: ordinal)
                changes.append(.put(record))
                last = ordinal
            }
        }
        for id in known.keys where next[id] == nil { changes.append(.delete(id)) }
        let oldExtras = extras?.records ?? [:]
        for (id, record) in nextExtras?.records ?? [:] where oldExtras[id]?.payload.elementsEqual(record.payload) != true {
            changes.append(.put(record))
        }
        for id in oldExtras.keys where nextExtras?.records[id] == nil { changes.append(.delete(id)) }
        let nextLayout = sections.isEmpty ? nil : RecordCodec.record(sections: sections)
        if let nextLayout, layout?.payload.elementsEqual(nextLayout.payload) != true { changes.append(.put(nextLayout)) }
        if nextLayout == nil, let layout { changes.append(.delete(layout.id)) }
        known = next
        extras = nextExtras
        layout = nextLayout
        return changes
    }

    /// Takes `bytes`, which this store wrote for `index` after applying `changes` to what it
    /// knew, as the document it knows, without parsing the entries.
    mutating func adopt(_ bytes: [UInt8], index: Index, changes: [RecordChange]) throws {
        var records: [RecordID: Record] = [:]
        for (id, known) in known { records[id] = known.record }
        for (id, record) in extras?.records ?? [:] { records[id] = record }
        if let layout { records[layout.id] = layout }
        for change in changes {
            switch change {
            case .put(let record): records[record.id] = record
            case .delete(let id): records[id] = nil
            }
        }
        var next: [RecordID: Known] = [:]
        next.reserveCapacity(known.count + changes.count)
        var nextExtras: (bytes: ArraySlice<UInt8>, records: [RecordID: Record])?
        for member in try JSONOutline.members(of: bytes, in: 0..<bytes.count) ?? [] {
            let value = bytes[member.value]
            if member.key == SharedCacheStore.extrasSection {
                nextExtras = (value, records.filter { $0.key.kind == .clientState || $0.key.kind == .tenantAlias })
                continue
            }
            guard let kind = CredentialKind(sectionName: member.key) else {
                let id = RecordID(kind: .unknownSection, name: member.key)
                if let record = records[id] { next[id] = Known(bytes: value, record: record, ordinal: 0) }
                continue
            }
            for entry in try JSONOutline.members(of: bytes, in: member.value) ?? [] {
                let id = RecordID(kind: RecordCodec.recordKind(kind), name: entry.key)
                guard let record = records[id], let stored = index[EntryID(kind: kind, key: entry.key)] else { continue }
                next[id] = Known(bytes: bytes[entry.value], record: record, ordinal: stored.ordinal)
            }
        }
        known = next
        extras = nextExtras
        layout = records[RecordID(kind: .layout, name: RecordCodec.layoutName)]
    }

    /// The records the extras section holds: per-client sign-in state and tenant aliases.
    private static func readExtras(_ bytes: ArraySlice<UInt8>) throws -> (bytes: ArraySlice<UInt8>, records: [RecordID: Record]) {
        guard case .object(let parts) = try JSONParser.parse(bytes) else {
            throw TokenCacheError(.malformedCache, "the \(SharedCacheStore.extrasSection) section is not a JSON object")
        }
        var records: [RecordID: Record] = [:]
        if case .object(let states)? = parts["ClientState"] {
            for (client, value) in states {
                var payload: [UInt8] = [RecordCodec.formatVersion]
                JSONWriter.write(value, style: .compact, into: &payload)
                let record = Record(id: RecordID(kind: .clientState, name: client), payload: payload)
                records[record.id] = record
            }
        }
        if case .object(let aliases)? = parts["TenantAlias"] {
            for (name, value) in aliases {
                guard case .string(let tenant) = value else {
                    throw TokenCacheError(.malformedCache, "the \(SharedCacheStore.extrasSection) section is damaged")
                }
                let record = RecordCodec.record(tenantAlias: name, tenantId: tenant)
                records[record.id] = record
            }
        }
        return (bytes, records)
    }
}
