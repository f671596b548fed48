import HashTreeCollections

/// A write in progress: an index being changed, and the store changes that persist it.
///
/// Every mutation goes through here so the index a writer publishes and the records it commits
/// never disagree.
struct IndexTransaction {
    private(set) var index: Index
    private(set) var changes: [RecordChange] = []
    private let sectionsBefore: [String]
    /// Whether a client's sign-in state is stored a record per account whatever its size: in a
    /// group whose instances each hold only part of it (``PartialStore``), where no instance
    /// knows every account a client signed into.
    private let signInStatePerAccount: Bool

    /// A write on `index`; `signInStatePerAccount`: see ``signInStatePerAccount``.
    init(_ index: Index, signInStatePerAccount: Bool = false) {
        self.index = index
        self.sectionsBefore = index.sections
        self.signInStatePerAccount = signInStatePerAccount
    }

    /// A client with at most this many accounts signed in or out keeps them listed in its own
    /// record, as every version reads it (a desktop app's few accounts, shared with apps built
    /// on older versions); past it, a record per account, so that a sign-in writes what it
    /// changed (a web app's users).
    static let listingLimit = 64

    /// Files `entry` under `key` (msal-python's key when `nil`). An entry already filed under
    /// that key keeps its position in the document; one equal to `entry` stays as it is, and
    /// the transaction records no change for it.
    @discardableResult
    mutating func put(_ entry: CacheEntry, key: String? = nil) -> EntryID {
        let id = EntryID(kind: entry.kind, key: key ?? entry.msalKey)
        let filed = index[id]
        // An entry put again unchanged (the account on every refresh) is no change: no record
        // to seal and commit, and none for other processes to catch up on.
        if let filed, Self.holdsSameMembers(filed.entry, entry) { return id }
        var stored = StoredEntry(id: id, ordinal: filed?.ordinal ?? index.nextOrdinal, entry: entry)
        let record = RecordCodec.record(stored)
        switch (filed?.entry.members, entry.members) {
        case (.payload(let old)?, .object) where old.elementsEqual(record.payload): return id
        case (_, .payload(let payload)) where EntryPayload.ordinal(of: payload) != stored.ordinal:
            // Filed with the record's payload, which has its ordinal, so as not to change it again.
            stored = StoredEntry(id: id, ordinal: stored.ordinal, entry: entry.holding(record.payload))
        default: break
        }
        index.insert(stored)
        changes.append(.put(record))
        return id
    }

    /// Files entry records (an import's: payloads whose ordinals count from 1) under their names,
    /// as ``put(_:key:)`` would one by one: a record under an id the index holds takes that
    /// entry's place and ordinal (and is no change when it holds the same members), the others
    /// come after in order, and a later record of an id replaces an earlier one.
    ///
    /// Every map is filled in one pass from the records, as opening a group fills them, into an
    /// index without entries, and into one that holds entries when the records are many beside
    /// them (``filesInOneGo(adding:to:)``): then its entries are filed again with them. That
    /// needs every record's id to be another; when two records share one, nothing is filed that
    /// way, `repeatedID` is called (an import refuses the document there), and then the records
    /// are filed one by one. Returns whether they were filed in one pass. `keyHashes`, when
    /// given, are the records' names' ``StringHash``es, in order.
    mutating func putAll(_ records: [Record], keyHashes: [Int]?, repeatedID: () throws -> Void) rethrows -> Bool {
        if index.count == 0 || Self.filesInOneGo(adding: records.count, to: index.count) {
            let filed = index.count == 0 ? fileAll(records, keyHashes: keyHashes) : fileAgain(with: records, keyHashes: keyHashes)
            if filed { return true }
            try repeatedID()
        }
        // A repeated id keeps its first ordinal, as put does.
        var decoder = EntryDecoder()
        for record in records {
            let kind = RecordCodec.credentialKind(record.id.kind)!
            put(Self.decoded(try? decoder.decode(kind: kind, payload: record.payload).entry), key: record.id.name)
        }
        return false
    }

    /// Whether ``putAll(_:keyHashes:repeatedID:)`` files `added` records into an index that holds
    /// `held` entries by filing them all again in one pass: once the records are more than a
    /// small part of the index. Filing an entry in one pass costs a small part of inserting it
    /// into a dozen persistent maps, but every entry the index holds is filed again; a few
    /// records are cheaper to insert one by one.
    static func filesInOneGo(adding added: Int, to held: Int) -> Bool {
        added >= 64 && added * 5 >= held
    }

    /// ``putAll(_:keyHashes:repeatedID:)``'s filing in one pass into an index without entries;
    /// `false`, with nothing filed, when two records share an id.
    private mutating func fileAll(_ records: [Record], keyHashes: [Int]?) -> Bool {
        let base = index.nextOrdinal
        let records =
            base == 1
            ? records
            : records.map {
                Record(
                    id: $0.id,
                    payload: EntryPayload.payload($0.payload, ordinal: base + EntryPayload.ordinal(of: $0.payload)! - 1))
            }
        guard index.fileAll(Self.decoded(try? RecordCodec.decodeAll(records, keyHashes: keyHashes).filing)) == nil else {
            return false
        }
        // And the layout record: a memory store keeps this list as its records.
        changes.reserveCapacity(changes.count + records.count + 1)
        for record in records { changes.append(.put(record)) }
        return true
    }

    /// ``putAll(_:keyHashes:repeatedID:)``'s filing in one pass into an index that holds entries:
    /// they are filed again with the records; `false`, with nothing filed, when two records share
    /// an id.
    private mutating func fileAgain(with records: [Record], keyHashes: [Int]?) -> Bool {
        // The records under ids the index holds, with the ordinals of the entries they replace,
        // and the others, numbered after the index's entries.
        var replacing: [EntryID: (ordinal: UInt64, record: Record)] = [:]
        var added: [Record] = []
        var addedHashes: [Int] = []
        for position in records.indices {
            let record = records[position]
            let id = EntryID(
                kind: RecordCodec.credentialKind(record.id.kind)!, keyText: record.id.nameText, keyHash: keyHashes?[position])
            if let ordinal = index.entries.ordinal(of: id) {
                guard replacing.updateValue((ordinal, record), forKey: id) == nil else { return false }
            } else {
                added.append(
                    Record(
                        id: record.id,
                        payload: EntryPayload.payload(record.payload, ordinal: index.nextOrdinal + UInt64(added.count))))
                addedHashes.append(id.keyHash)
            }
        }
        // The index's entries in order, each replaced in its place unless it holds what replaces it.
        // Their ids' hashes go with them: a key held as its payload would be made again to be hashed.
        var puts = added.map(RecordChange.put)
        let held = index.entries.recordsInOrder()
        let all =
            held.map { entry in
                guard let (ordinal, record) = replacing[entry.id], !EntryPayload.sameMembers(entry.record.payload, record.payload)
                else { return entry.record }
                let replaced = Record(id: record.id, payload: EntryPayload.payload(record.payload, ordinal: ordinal))
                puts.append(.put(replaced))
                return replaced
            } + added
        // Every record held what its entry holds: nothing to file.
        if puts.isEmpty { return true }
        let hashes = held.map(\.id.keyHash) + addedHashes
        guard index.refileAll(Self.decoded(try? RecordCodec.decodeAll(all, keyHashes: hashes).filing)) == nil else {
            return false
        }
        changes += puts
        return true
    }

    /// What decoding an import's payload made: they were written by this engine's own reader.
    private static func decoded<Value>(_ value: Value?) -> Value {
        guard let value else { preconditionFailure("a payload written for an import does not decode") }
        return value
    }

    /// Replaces the entry filed under `existing` with `entry`: in place when `existing` is under
    /// a key another SDK made (MSAL rule: update foreign entries under their own key), else
    /// under msal-python's key for the new contents.
    @discardableResult
    mutating func replace(_ existing: EntryID, with entry: CacheEntry) -> EntryID {
        guard let old = index[existing] else { return put(entry) }
        // The same members (the account and the id token on most refreshes) would be filed
        // under the same key as the old, whichever of the cases below: no change, and no key
        // to make.
        if old.id.kind == entry.kind, Self.holdsSameMembers(old.entry, entry) { return existing }
        // Under the key it had (the usual refresh), both cases put it there: only another key
        // asks whose key the existing one is. Compared as key texts, byte for byte as entry ids
        // compare, so that an existing key held as its payload is not made into a string.
        let newKey = entry.msalKey
        if existing.keyText == KeyText(newKey) { return put(entry, key: newKey) }
        guard existing.keyText == KeyText(old.entry.msalKey) else {
            return put(entry, key: existing.key)
        }
        delete(existing)
        return put(entry, key: newKey)
    }

    /// Whether `entry` holds the members `filed` holds, compared as held, so that nothing is
    /// decoded: the same members in the same order, or the same payload whatever its ordinal. A
    /// payload written another way only means writing an equal entry again.
    private static func holdsSameMembers(_ filed: CacheEntry, _ entry: CacheEntry) -> Bool {
        switch (filed.members, entry.members) {
        case (.object(let old), .object(let new)): old == new
        case (.payload(let old), .payload(let new)): EntryPayload.sameMembers(old, new)
        default: false
        }
    }

    mutating func delete(_ id: EntryID) {
        // One lookup: finding the id costs a key compare, which for a key held as its payload
        // makes the key's text from both payloads.
        guard index.remove(id) else { return }
        changes.append(.delete(RecordCodec.recordID(id)))
    }

    /// Changes a client's sign-in state, and records what changed. A state of up to
    /// ``listingLimit`` accounts is one record, the client's, listing them; a larger one (or any,
    /// with ``signInStatePerAccount``) is a record for each account, written when its standing
    /// changes, and the client's record of its current and previous account. A state that
    /// crosses the limit is written whole once in its new form.
    mutating func updateClientState(_ client: String, _ body: (inout ClientState) -> Void) {
        var state = index.clientStates[client] ?? ClientState()
        let before = state
        body(&state)
        guard state != before else { return }
        let listedBefore = before.isEmpty || before.listedInClientRecord
        let listedAfter = !signInStatePerAccount && Self.listsAccounts(state)
        state.listedInClientRecord = listedAfter
        index.setClientState(state, for: client)
        if !listedBefore, listedAfter || state.isEmpty {
            // Their records go one by one, before the record that lists what is left.
            for account in before.signedIn.union(before.signedOut).sorted() {
                changes.append(.delete(RecordCodec.signInRecordID(client: client, account: account)))
            }
        }
        if state.isEmpty {
            changes.append(.delete(RecordID(kind: .clientState, name: client)))
            return
        }
        if listedBefore || listedAfter {
            for record in RecordCodec.records(whole: state, client: client, listed: listedAfter) { changes.append(.put(record)) }
            return
        }
        for account in state.accountsChanged(since: before).sorted() {
            if let standing = state.standing(of: account) {
                changes.append(.put(RecordCodec.record(signIn: standing, client: client, account: account)))
            } else {
                changes.append(.delete(RecordCodec.signInRecordID(client: client, account: account)))
            }
        }
        // Never removed while the client has accounts: readers take its removal for the end of
        // the whole state.
        if state.current != before.current || state.previous != before.previous {
            changes.append(.put(RecordCodec.record(clientState: state, client: client)))
        }
    }

    /// Whether `state` fits in its client's own record: at most ``listingLimit`` accounts.
    static func listsAccounts(_ state: ClientState) -> Bool {
        state.signedIn.count + state.signedOut.count <= listingLimit
    }

    mutating func setUnknownSection(_ name: String, _ value: JSONValue) {
        index.setUnknownSection(name, value)
        changes.append(.put(RecordCodec.record(unknownSection: name, value: value)))
    }

    /// Remembers that requests naming tenant `name` (a domain) got tokens for `tenantId`.
    mutating func setTenantAlias(_ name: String, tenantId: String) {
        guard index.tenantAliases[name] != tenantId else { return }
        index.setTenantAlias(name, tenantId)
        changes.append(.put(RecordCodec.record(tenantAlias: name, tenantId: tenantId)))
    }

    mutating func setSections(_ names: [String]) {
        index.setSections(names)
    }

    /// The changes to commit, with the section layout when it changed; the transaction keeps
    /// them (a write that goes on using them, as one kept in memory through an outage does).
    var recordChanges: [RecordChange] {
        var done = self
        return done.takeRecordChanges()
    }

    /// ``recordChanges``, moved out of a transaction that is done: the list is handed over
    /// rather than copied (an import's is a record per entry, each copy a retain and a release),
    /// and the transaction keeps no changes.
    mutating func takeRecordChanges() -> [RecordChange] {
        if index.sections != sectionsBefore { changes.append(.put(RecordCodec.record(sections: index.sections))) }
        defer { changes = [] }
        return changes
    }
}
