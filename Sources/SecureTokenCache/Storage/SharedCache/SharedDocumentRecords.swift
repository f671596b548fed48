/// What a shared MSAL document holds, as the records the engine files: one per entry, one per
/// unknown section, the section layout, and what ``SharedCacheStore/extrasSection`` keeps.
///
/// The tools rewrite the whole document for every change, and write unchanged entries with the
/// same bytes. So the last document read is kept with its outline (``JSONOutline``), and a read
/// of the next one compares them: an entry whose bytes are where the outline expects them costs
/// one comparison of memory, only the entries whose bytes differ are parsed, and only what
/// changed is reported.
///
/// Ordinals (the order the engine writes entries back in) follow the document within each kind:
/// an entry keeps its ordinal while that stays in document order, and the entries between two
/// kept ones take ordinals between theirs. New entries at the end leave a gap
/// (``ordinalSpacing``), so that an entry another tool inserts later finds room without
/// renumbering, and so rewriting, its neighbours.
struct SharedDocumentRecords {
    /// One section of entries as last read: its members, whose bytes are in ``document``, and
    /// the ordinal of each.
    private struct Section {
        var members: [JSONOutline.Member] = []
        var ordinals: [UInt64] = []

        /// The section as it was, at `outline` (its members matched one for one with these) or,
        /// without one, `shift` bytes further into the document.
        func same(at outline: JSONOutline.Comparison?, movedBy shift: Int) -> Section {
            if let outline { return Section(members: outline.members, ordinals: ordinals) }
            return moved(by: shift)
        }

        /// The section with its bytes `shift` bytes further into the document.
        func moved(by shift: Int) -> Section {
            guard shift != 0 else { return self }
            return Section(members: members.map { $0.moved(by: shift) }, ordinals: ordinals)
        }
    }

    /// The gap between the ordinals of entries read one after another with no kept entry after
    /// them.
    static let ordinalSpacing: UInt64 = 1 << 16

    /// The document last read or written, its top-level members and their names.
    private var document: [UInt8] = []
    private var top: [JSONOutline.Member] = []
    private var topNames: [String] = []
    /// The sections of entries, by section name.
    private var sections: [String: Section] = [:]
    /// Entries and unknown sections, by record id.
    private var known: [RecordID: Record] = [:]
    /// The records of the extras section.
    private var extras: [RecordID: Record] = [:]
    /// The layout record.
    private var layout: Record?
    /// The strings the entries read so far repeat (cloud, client, tenant, account, scopes),
    /// kept from one read to the next: the entries another tool rewrites are the same users'.
    private var sharing = StringInterner()

    /// Every record, in no particular order.
    var records: [Record] { Array(known.values) + Array(extras.values) + (layout.map { [$0] } ?? []) }

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

    /// Whether `bytes` are the document's, as last read or adopted.
    func holds(_ bytes: [UInt8]) -> Bool { bytes == document }

    private mutating func read(_ bytes: [UInt8]) throws -> [RecordChange] {
        let outline = try outline(bytes)
        let topNames = outline.members.map { $0.name(in: bytes) }
        // Kinds whose sections are not one section of the same name in both documents (another
        // SDK's spelling, or two spellings in one document): their entries are matched by id
        // across sections, as a whole import files them.
        let tangled = Self.tangledKinds(self.topNames, topNames)
        var placed: [RecordID: UInt64] = [:]
        var gone: [RecordID] = []
        var changes: [RecordChange] = []
        var nextSections: [String: Section] = [:]
        var names: [String] = []
        var kinds = Set<CredentialKind>()
        var unknownNames = Set<String>()
        var nextExtras: [RecordID: Record] = [:]
        var lastOrdinal: [CredentialKind: UInt64] = [:]
        for (index, (member, match)) in zip(outline.members, outline.matches).enumerated() {
            let name = topNames[index]
            if name == SharedCacheStore.extrasSection {
                nextExtras = match.unchanged ? extras : try Self.readExtras(bytes[member.value])
                continue
            }
            guard let kind = CredentialKind(sectionName: name) else {
                names.append(name)
                unknownNames.insert(name)
                let id = RecordID(kind: .unknownSection, name: name)
                if match.unchanged, known[id] != nil { continue }
                let record = RecordCodec.record(unknownSection: name, value: try JSONParser.parse(bytes[member.value]))
                if known[id]?.payload.elementsEqual(record.payload) != true { changes.append(.put(record)) }
                continue
            }
            if kinds.insert(kind).inserted { names.append(name) }
            let earlier = sections[name] ?? Section()
            let last = lastOrdinal[kind] ?? 0
            if match.unchanged, let position = match.earlier, !tangled.contains(kind), earlier.ordinals.first ?? .max > last {
                // The whole section as it was: its entries moved with it.
                lastOrdinal[kind] = earlier.ordinals.last ?? last
                nextSections[name] = earlier.same(
                    at: outline.inner[index], movedBy: member.value.lowerBound - top[position].value.lowerBound)
                continue
            }
            let entries = try self.entries(of: member, at: index, in: outline, bytes: bytes, earlier: earlier)
            let recordKind = RecordCodec.recordKind(kind)
            let isTangled = tangled.contains(kind)
            let ordinals = Self.ordinals(entries.matches, earlier: earlier.ordinals, after: last) { position in
                !isTangled || placed[RecordID(kind: recordKind, name: entries.members[position].name(in: bytes))] == nil
            }
            var section = Section(members: entries.members, ordinals: [])
            section.ordinals.reserveCapacity(entries.members.count)
            for (position, entry) in entries.members.enumerated() {
                var ordinal = ordinals[position].ordinal
                let id = isTangled ? RecordID(kind: recordKind, name: entry.name(in: bytes)) : nil
                if let id {
                    // A repeated entry keeps its first ordinal, as a whole import files it.
                    if let first = placed[id] { ordinal = first } else { placed[id] = ordinal }
                }
                section.ordinals.append(ordinal)
                if ordinals[position].kept { continue }
                guard case .object(let fields) = try JSONParser.parse(bytes[entry.value]) else {
                    throw TokenCacheError(.malformedCache, "an entry of section \"\(name)\" is not a JSON object")
                }
                var parts = EntryParts(fields)
                parts.share(with: &sharing)
                let stored = StoredEntry(
                    id: EntryID(kind: kind, key: entry.name(in: bytes)), ordinal: ordinal,
                    entry: CacheEntry(kind: kind, members: .object(fields), parts: parts))
                changes.append(.put(RecordCodec.record(stored)))
            }
            lastOrdinal[kind] = max(last, ordinals.last?.ordinal ?? last)
            var matched = [Bool](repeating: false, count: earlier.members.count)
            for match in entries.matches { if let position = match.earlier { matched[position] = true } }
            for (position, member) in earlier.members.enumerated() where !matched[position] {
                gone.append(RecordID(kind: recordKind, name: member.name(in: document)))
            }
            nextSections[name] = section
        }
        // Sections no longer there, and entries gone from the sections still there.
        for (name, section) in sections where nextSections[name] == nil {
            guard let kind = CredentialKind(sectionName: name) else { continue }
            let recordKind = RecordCodec.recordKind(kind)
            gone.append(contentsOf: section.members.map { RecordID(kind: recordKind, name: $0.name(in: document)) })
        }
        for id in gone {
            let kind = RecordCodec.credentialKind(id.kind)
            if let kind, tangled.contains(kind), placed[id] != nil { continue }
            changes.append(.delete(id))
        }
        for name in self.topNames where name != SharedCacheStore.extrasSection && CredentialKind(sectionName: name) == nil {
            if !unknownNames.contains(name) { changes.append(.delete(RecordID(kind: .unknownSection, name: name))) }
        }
        for (id, record) in nextExtras where extras[id]?.payload.elementsEqual(record.payload) != true {
            changes.append(.put(record))
        }
        for id in extras.keys where nextExtras[id] == nil { changes.append(.delete(id)) }
        let nextLayout = names.isEmpty ? nil : RecordCodec.record(sections: names)
        if let nextLayout, layout?.payload.elementsEqual(nextLayout.payload) != true { changes.append(.put(nextLayout)) }
        if nextLayout == nil, let layout { changes.append(.delete(layout.id)) }

        document = bytes
        top = outline.members
        self.topNames = topNames
        sections = nextSections
        apply(changes)
        return changes
    }

    /// Takes `bytes`, which this store wrote for `index` after applying `changes` to what it
    /// knew, as the document it knows, without parsing the entries.
    mutating func adopt(_ bytes: [UInt8], index: Index, changes: [RecordChange]) throws {
        let outline = try outline(bytes)
        let topNames = outline.members.map { $0.name(in: bytes) }
        var nextSections: [String: Section] = [:]
        for (place, (member, match)) in zip(outline.members, outline.matches).enumerated() {
            let name = topNames[place]
            guard let kind = CredentialKind(sectionName: name) else { continue }
            let earlier = sections[name] ?? Section()
            if match.unchanged, let position = match.earlier {
                nextSections[name] = earlier.same(
                    at: outline.inner[place], movedBy: member.value.lowerBound - top[position].value.lowerBound)
                continue
            }
            let entries = try self.entries(of: member, at: place, in: outline, bytes: bytes, earlier: earlier)
            var section = Section(members: entries.members, ordinals: [])
            section.ordinals.reserveCapacity(entries.members.count)
            for (entry, match) in zip(entries.members, entries.matches) {
                if match.unchanged, let position = match.earlier {
                    section.ordinals.append(earlier.ordinals[position])
                } else {
                    section.ordinals.append(index[EntryID(kind: kind, key: entry.name(in: bytes))]?.ordinal ?? 0)
                }
            }
            nextSections[name] = section
        }
        document = bytes
        top = outline.members
        self.topNames = topNames
        sections = nextSections
        apply(changes)
    }

    /// Files `changes` in ``known``, ``extras`` and ``layout``.
    private mutating func apply(_ changes: [RecordChange]) {
        for change in changes {
            switch change {
            case .put(let record):
                switch record.id.kind {
                case .clientState, .signInState, .tenantAlias: extras[record.id] = record
                case .layout: layout = record
                default: known[record.id] = record
                }
            case .delete(let id):
                switch id.kind {
                case .clientState, .signInState, .tenantAlias: extras[id] = nil
                case .layout: layout = nil
                default: known[id] = nil
                }
            }
        }
    }

    /// The top-level members of `bytes` matched with those of ``document``, with the members of
    /// the sections of entries that changed matched with theirs; none for an empty document.
    private func outline(_ bytes: [UInt8]) throws -> JSONOutline.Comparison {
        guard !bytes.isEmpty else { return JSONOutline.Comparison() }
        let sections = sections
        let outline = try JSONOutline.members(of: bytes, in: 0..<bytes.count, comparedWith: top, in: document) { name in
            CredentialKind(sectionName: name) == nil ? nil : sections[name]?.members ?? []
        }
        guard let outline else { throw TokenCacheError(.malformedCache, "an MSAL cache must be a JSON object") }
        return outline
    }

    /// The entries of the section `member`, at `position` of `outline`, matched with those of
    /// `earlier`.
    private func entries(
        of member: JSONOutline.Member, at position: Int, in outline: JSONOutline.Comparison, bytes: [UInt8], earlier: Section
    ) throws -> JSONOutline.Comparison {
        if let entries = outline.inner[position] { return entries }
        guard let entries = try JSONOutline.members(of: bytes, in: member.value, comparedWith: earlier.members, in: document)
        else {
            throw TokenCacheError(.malformedCache, "section \"\(member.name(in: bytes))\" is not a JSON object")
        }
        return entries
    }

    /// The kinds whose entries are not in one section of the same name in both `before` and
    /// `after` (the names of top-level members).
    private static func tangledKinds(_ before: [String], _ after: [String]) -> Set<CredentialKind> {
        func names(_ members: [String]) -> [CredentialKind: [String]] {
            var names: [CredentialKind: [String]] = [:]
            for name in members {
                if let kind = CredentialKind(sectionName: name) { names[kind, default: []].append(name) }
            }
            return names
        }
        let (old, new) = (names(before), names(after))
        var tangled = Set<CredentialKind>()
        for (kind, names) in new {
            if names.count > 1 || (old[kind].map { $0 != names } ?? false) { tangled.insert(kind) }
        }
        for (kind, names) in old where names.count > 1 { tangled.insert(kind) }
        return tangled
    }

    /// The ordinal of each member of a section matched as `matches` say with members whose
    /// ordinals were `earlier`, all above `last`, and whether it is the earlier one, kept: an
    /// unchanged member keeps its ordinal while that stays in order and leaves room for the
    /// members before it, when `mayKeep` lets it; the others take ordinals spread between
    /// their kept neighbours' (``ordinalSpacing`` apart after the last one).
    private static func ordinals(
        _ matches: [JSONOutline.Match], earlier: [UInt64], after last: UInt64, mayKeep: (Int) -> Bool
    ) -> [(ordinal: UInt64, kept: Bool)] {
        var result = [(ordinal: UInt64, kept: Bool)](repeating: (0, false), count: matches.count)
        var previous = last
        var waiting = 0
        for (position, match) in matches.enumerated() {
            if match.unchanged, let old = match.earlier.map({ earlier[$0] }), old > previous,
                old - previous > UInt64(waiting), mayKeep(position)
            {
                result[position] = (old, true)
                previous = old
                waiting = 0
            } else {
                waiting += 1
            }
        }
        previous = last
        var position = 0
        while position < matches.count {
            if result[position].kept {
                previous = result[position].ordinal
                position += 1
                continue
            }
            var end = position
            while end < matches.count, !result[end].kept { end += 1 }
            let step = end < matches.count ? (result[end].ordinal - previous) / UInt64(end - position + 1) : ordinalSpacing
            for waiting in position..<end {
                previous += step
                result[waiting] = (previous, false)
            }
            position = end
        }
        return result
    }

    /// The records the extras section holds: per-client sign-in state and tenant aliases.
    private static func readExtras(_ bytes: ArraySlice<UInt8>) throws -> [RecordID: Record] {
        guard case .object(let parts) = try JSONParser.parse(bytes) else {
            throw TokenCacheError(.malformedCache, "the \(SharedCacheStore.extrasSection) section is not a JSON object")
        }
        var records: [RecordID: Record] = [:]
        if case .object(let states)? = parts["ClientState"] {
            // The section lists every account of a client in one object; the records are those
            // the engine writes for such a state.
            for (client, value) in states {
                guard case .object = value else {
                    throw TokenCacheError(.malformedCache, "the \(SharedCacheStore.extrasSection) section is damaged")
                }
                let state = try ClientState(json: value)
                let listed = IndexTransaction.listsAccounts(state)
                for record in RecordCodec.records(whole: state, client: client, listed: listed) {
                    records[record.id] = record
                }
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
        return records
    }
}
