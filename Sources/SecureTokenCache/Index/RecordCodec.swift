import Dispatch
import Glibc
import HashTreeCollections
import Synchronization

/// Turns index contents into store records and back.
///
/// An entry record is named by its cache key; its payload is an ``EntryPayload`` (version byte,
/// ordinal, members in a binary form). The other records (client state, section layout, unknown
/// sections, tenant aliases) are a version byte and compact JSON or text. Stores seal every
/// payload.
enum RecordCodec {
    /// The version byte of the JSON and text records (every record but entries).
    static let formatVersion: UInt8 = 1
    static let layoutName = "sections"

    static func recordKind(_ kind: CredentialKind) -> RecordKind {
        switch kind {
        case .accessToken: .accessToken
        case .refreshToken: .refreshToken
        case .idToken: .idToken
        case .account: .account
        case .appMetadata: .appMetadata
        }
    }

    /// The entry kind a record kind stores, if any: ``recordKind(_:)`` read backwards.
    static func credentialKind(_ kind: RecordKind) -> CredentialKind? { credentialKinds[Int(kind.rawValue)] }

    /// ``credentialKind(_:)`` by raw value, made once from ``recordKind(_:)``.
    private static let credentialKinds: [CredentialKind?] = {
        var kinds = [CredentialKind?](repeating: nil, count: Int(UInt8.max) + 1)
        for kind in CredentialKind.allCases { kinds[Int(recordKind(kind).rawValue)] = kind }
        return kinds
    }()

    static func recordID(_ id: EntryID) -> RecordID { RecordID(kind: recordKind(id.kind), nameText: id.keyText) }

    static func record(_ stored: StoredEntry) -> Record {
        Record(id: recordID(stored.id), payload: EntryPayload.encode(stored))
    }

    /// The client's own record when its accounts have records of their own
    /// (``record(signIn:client:account:)``): its current and previous account.
    static func record(clientState: ClientState, client: String) -> Record {
        var payload: [UInt8] = [formatVersion]
        clientState.writeCompactJSON(listing: false, into: &payload)
        return Record(id: RecordID(kind: .clientState, name: client), payload: payload)
    }

    /// The client's own record listing every account it signed into and out of, and its current
    /// and previous account: the whole state, as every version reads it.
    static func record(listing clientState: ClientState, client: String) -> Record {
        var payload: [UInt8] = [formatVersion]
        clientState.writeCompactJSON(listing: true, into: &payload)
        return Record(id: RecordID(kind: .clientState, name: client), payload: payload)
    }

    /// Every record that holds `clientState` whole: the client's record listing its accounts
    /// (`listed`), or a record for each account and, last, the client's record of its current and
    /// previous account. What a commit that writes the state in its form for the first time puts,
    /// and what a reader of a state written elsewhere in one piece (a shared document's) files.
    static func records(whole clientState: ClientState, client: String, listed: Bool) -> [Record] {
        if listed { return [record(listing: clientState, client: client)] }
        var records: [Record] = []
        records.reserveCapacity(clientState.signedIn.count + clientState.signedOut.count + 1)
        for account in clientState.signedIn.union(clientState.signedOut).sorted() {
            guard let standing = clientState.standing(of: account) else { continue }
            records.append(record(signIn: standing, client: client, account: account))
        }
        records.append(record(clientState: clientState, client: client))
        return records
    }

    /// The record saying where `account` stands with `client`.
    static func record(signIn standing: SignInStanding, client: String, account: String) -> Record {
        Record(id: signInRecordID(client: client, account: account), payload: [formatVersion, standing.rawValue])
    }

    /// The id of the record saying where `account` stands with `client`: the two names on two
    /// lines (a client id has no line break; the account comes last, so whatever it holds, the
    /// first line break ends the client).
    static func signInRecordID(client: String, account: String) -> RecordID {
        RecordID(kind: .signInState, name: client + "\n" + account)
    }

    /// The partition (``CachePartition/storageKey``) a sign-in record belongs to: its user's.
    /// `nil` for a record of another kind, or a damaged name.
    static func signInPartition(of id: RecordID) -> String? {
        guard id.kind == .signInState, let (_, account) = try? signInNames(id.name) else { return nil }
        return CachePartition.user(HomeAccountId(account)).storageKey
    }

    /// The client and the account a ``RecordKind/signInState`` record is named by.
    static func signInNames(_ name: String) throws -> (client: String, account: String) {
        guard let newline = name.firstIndex(of: "\n") else {
            throw TokenCacheError(.storeCorrupted, "a sign-in state record has a damaged name: the group is damaged")
        }
        return (String(name[..<newline]), String(name[name.index(after: newline)...]))
    }

    static func record(tenantAlias name: String, tenantId: String) -> Record {
        var payload: [UInt8] = [formatVersion]
        payload.append(contentsOf: tenantId.utf8)
        return Record(id: RecordID(kind: .tenantAlias, name: name), payload: payload)
    }

    static func record(sections: [String]) -> Record {
        var payload: [UInt8] = [formatVersion]
        JSONWriter.write(.array(sections.map(JSONValue.string)), style: .compact, into: &payload)
        return Record(id: RecordID(kind: .layout, name: layoutName), payload: payload)
    }

    static func record(unknownSection name: String, value: JSONValue) -> Record {
        var payload: [UInt8] = [formatVersion]
        JSONWriter.write(value, style: .compact, into: &payload)
        return Record(id: RecordID(kind: .unknownSection, name: name), payload: payload)
    }

    private static func body(_ payload: ArraySlice<UInt8>, headerSize: Int) throws -> JSONValue {
        guard payload.count > headerSize, payload.first == formatVersion else {
            throw TokenCacheError(
                .unsupportedFormat, "a record has an unknown format; upgrade SecureTokenCache to read this group")
        }
        return try JSONParser.parse(payload.dropFirst(headerSize))
    }

    /// A store change decoded into what the index files. Decoding can fail (a damaged record);
    /// filing cannot, so an index is never left half-updated.
    enum DecodedChange {
        case insert(StoredEntry)
        case remove(EntryID)
        case clientState(String, ClientState)
        /// The client's own record removed: the end of its whole state.
        case clientStateRemoved(String)
        /// Where an account stands with a client (`nil`: neither signed in nor out).
        case signIn(client: String, account: String, SignInStanding?)
        case sections([String])
        case unknownSection(String, JSONValue?)
        case tenantAlias(String, String?)
    }

    /// Decodes one store change.
    static func decode(_ change: RecordChange) throws -> DecodedChange? {
        var decoder = EntryDecoder()
        return try decode(change, with: &decoder)
    }

    /// Decodes one store change with a decoder shared by the changes of one update.
    static func decode(_ change: RecordChange, with decoder: inout EntryDecoder) throws -> DecodedChange? {
        switch change {
        case .delete(let id):
            if let kind = credentialKind(id.kind) { return .remove(EntryID(kind: kind, keyText: id.nameText)) }
            switch id.kind {
            case .clientState: return .clientStateRemoved(id.name)
            case .signInState:
                let (client, account) = try signInNames(id.name)
                return .signIn(client: client, account: account, nil)
            case .unknownSection: return .unknownSection(id.name, nil)
            case .tenantAlias: return .tenantAlias(id.name, nil)
            default: return nil
            }
        case .put(let record):
            return try decode(record, with: &decoder)
        }
    }

    /// Decodes one record: nothing interned, which only pays across the records of one load.
    static func decode(_ record: Record) throws -> DecodedChange {
        var decoder = EntryDecoder(sharing: false)
        return try decode(record, with: &decoder)
    }

    /// Decodes one record with a decoder shared by the records of one load.
    static func decode(_ record: Record, with decoder: inout EntryDecoder) throws -> DecodedChange {
        do {
            switch record.id.kind {
            case .layout:
                guard case .array(let names) = try body(record.payload, headerSize: 1) else {
                    throw TokenCacheError(.storeCorrupted, "the section layout record is not a JSON array")
                }
                return .sections(names.compactMap(\.stringValue))
            case .unknownSection:
                return .unknownSection(record.id.name, try body(record.payload, headerSize: 1))
            case .clientState:
                return .clientState(record.id.name, try ClientState(json: try body(record.payload, headerSize: 1)))
            case .signInState:
                guard record.payload.first == formatVersion else {
                    throw TokenCacheError(
                        .unsupportedFormat, "a record has an unknown format; upgrade SecureTokenCache to read this group")
                }
                guard record.payload.count == 2, let standing = record.payload.last.flatMap(SignInStanding.init(rawValue:)) else {
                    throw TokenCacheError(.storeCorrupted, "a sign-in state record is damaged: the group is damaged")
                }
                let (client, account) = try signInNames(record.id.name)
                return .signIn(client: client, account: account, standing)
            case .tenantAlias:
                guard record.payload.first == formatVersion else {
                    throw TokenCacheError(
                        .unsupportedFormat, "a record has an unknown format; upgrade SecureTokenCache to read this group")
                }
                return .tenantAlias(record.id.name, String(decoding: record.payload.dropFirst(), as: UTF8.self))
            case .accessToken, .refreshToken, .idToken, .account, .appMetadata:
                let kind = credentialKind(record.id.kind)!
                let (ordinal, entry) = try decoder.decode(kind: kind, payload: record.payload)
                return .insert(StoredEntry(id: EntryID(kind: kind, keyText: record.id.nameText), ordinal: ordinal, entry: entry))
            }
        } catch let error as TokenCacheError where error.code == .malformedCache {
            throw TokenCacheError(.storeCorrupted, "a record holds invalid JSON: the group is damaged")
        }
    }

    /// Files a decoded change into an index.
    static func file(_ change: DecodedChange, into index: inout Index) {
        switch change {
        case .insert(let stored): index.insert(stored)
        case .remove(let id): index.remove(id)
        case .clientState(let client, let state):
            // A record that lists the accounts is the whole state; one that does not is the
            // current and previous account only.
            if state.listedInClientRecord {
                index.setClientState(state, for: client)
            } else {
                index.setClientHead(of: client, current: state.current, previous: state.previous)
            }
        case .clientStateRemoved(let client):
            // Written only when the writer's state became empty; in a group held in part, the
            // standings of users another instance does not hold are not its to end.
            index.removeClientState(of: client)
        case .signIn(let client, let account, let standing): index.setStanding(standing, of: account, for: client)
        case .sections(let names): index.setSections(names)
        case .unknownSection(let name, let value): index.setUnknownSection(name, value)
        case .tenantAlias(let name, let tenantId): index.setTenantAlias(name, tenantId)
        }
    }

    /// Applies one store change to an index.
    static func apply(_ change: RecordChange, to index: inout Index) throws {
        if let decoded = try decode(change) { file(decoded, into: &index) }
    }

    /// Files one record into an index.
    static func apply(_ record: Record, to index: inout Index) throws {
        file(try decode(record), into: &index)
    }

    /// What a store update does to an index, decoded: apply it with ``file(_:into:)``.
    enum DecodedUpdate {
        case unchanged
        case changes([DecodedChange])
        case reload(Index)
    }

    /// Decodes a store update (the part of a catch-up that can fail).
    static func decode(_ update: StoreUpdate) throws -> DecodedUpdate {
        // Nothing to decode for a writer that was up to date (every write of a lone process).
        if case .unchanged = update { return .unchanged }
        var decoder = EntryDecoder()
        return try decode(update, with: &decoder)
    }

    /// Decodes a store update with a decoder kept from earlier updates (see ``EntryDecoder``).
    static func decode(_ update: StoreUpdate, with decoder: inout EntryDecoder) throws -> DecodedUpdate {
        switch update {
        case .unchanged:
            return .unchanged
        case .changes(let changes, _):
            decoder.forgetIfLarge()
            return .changes(try changes.compactMap { try decode($0, with: &decoder) })
        case .reload(let records, _):
            return .reload(try build(records))
        }
    }

    /// Applies a decoded update; cannot fail.
    static func file(_ update: DecodedUpdate, into index: inout Index) {
        switch update {
        case .unchanged: break
        case .changes(let changes): for change in changes { file(change, into: &index) }
        case .reload(let built): index = built
        }
    }

    /// Applies a store update (catch-up) to an index.
    static func apply(_ update: StoreUpdate, to index: inout Index) throws {
        file(try decode(update), into: &index)
    }

    /// Builds an index from a store's records.
    static func build(_ records: [Record]) throws -> Index {
        var index = Index()
        // A new group: nothing to gather, and gathering nothing still sets up every map's room.
        guard !records.isEmpty else { return index }
        // The layout first, so entry insertions do not invent a section order.
        for record in records where record.id.kind == .layout { try apply(record, to: &index) }
        let (filing, others) = try decodeAll(records)
        for change in others { file(change, into: &index) }
        // Handed over, not copied: the filing's rows move into the index's table only if nothing
        // else holds them.
        if let repeated = index.fileAll(consume filing) {
            // A repeated id (never in what a store loads): one by one, later replacing earlier.
            for stored in repeated { index.insert(stored) }
        }
        return index
    }

    /// A group's records decoded: its entries gathered for filing, and the rest (client state,
    /// tenant aliases, unknown sections) in record order. The layout record is left out.
    typealias DecodedRecords = (filing: BulkFiling, others: [DecodedChange])

    /// Below this many records, decoding on one thread is cheaper than starting others.
    static let parallelDecodingThreshold = 1_024

    /// Decodes records in order; a large group (opening one, a reload) is decoded in parts
    /// (``inParts(of:_:)``), each gathering its contiguous part of the records for filing, and
    /// the parts are joined in order. `keyHashes`, when given, are the records' names'
    /// ``StringHash``es, in order, so that no name is hashed again.
    static func decodeAll(_ records: [Record], keyHashes: [Int]? = nil) throws -> DecodedRecords {
        var parts = try inParts(of: records) { range, parallel in
            try decode(records[range], keyHashes: keyHashes?[range], parallel: parallel)
        }
        var (filing, others) = parts.removeFirst()
        while !parts.isEmpty {
            let part = parts.removeFirst()
            filing.append(part.filing)
            others += part.others
        }
        return (filing, others)
    }

    /// `body` run on contiguous parts of `records` that cost about the same (``parts(of:count:)``),
    /// one task per processor (at most 4) for a large group, else on all of them at once; the
    /// results in order. `body` is told whether other parts run at the same time. The first
    /// error thrown is rethrown once every part is done.
    static func inParts<Part: Sendable>(
        of records: [Record], _ body: @Sendable (Range<Int>, _ parallel: Bool) throws -> Part
    ) throws -> [Part] {
        let processors = min(4, Processors.online)
        guard records.count >= parallelDecodingThreshold, processors > 1 else {
            return [try body(records.indices, false)]
        }
        let ranges = parts(of: records, count: processors)
        let done = Mutex([Part?](repeating: nil, count: ranges.count))
        let failure = Mutex<(any Error)?>(nil)
        DispatchQueue.concurrentPerform(iterations: ranges.count) { part in
            do {
                let result = try body(ranges[part], true)
                done.withLock { $0[part] = result }
            } catch {
                failure.withLock { $0 = $0 ?? error }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        // Taken out of the lock, so that each part's arrays have one owner and move on.
        return done.withLock { done in
            defer { done = [] }
            return done.map { $0! }
        }
    }

    /// `records` cut into `count` contiguous parts that cost about the same to decode and file.
    ///
    /// Records of one kind lie together in a store (a compaction writes them section by
    /// section), and kinds do not cost the same: an account interns its username and is filed
    /// in three maps, an access token is filed in two and shares its keys with its neighbours.
    /// Equal counts of records left one thread with twice the work of the other.
    static func parts(of records: [Record], count: Int) -> [Range<Int>] {
        func weight(_ kind: RecordKind) -> Int {
            switch kind {
            case .accessToken, .idToken: 2
            case .refreshToken: 3
            case .account, .appMetadata: 4
            case .layout, .unknownSection, .clientState, .tenantAlias, .signInState: 2
            }
        }
        // Indices, not elements: a record read as a whole is retained and released.
        var total = 0
        for index in records.indices { total += weight(records[index].id.kind) }
        var ranges: [Range<Int>] = []
        var start = 0
        var done = 0
        for index in records.indices where ranges.count < count - 1 {
            done += weight(records[index].id.kind)
            if done * count >= total * (ranges.count + 1) {
                ranges.append(start..<(index + 1))
                start = index + 1
            }
        }
        ranges.append(start..<records.count)
        return ranges
    }

    private static func decode(
        _ records: ArraySlice<Record>, keyHashes: ArraySlice<Int>?, parallel: Bool = false
    ) throws -> DecodedRecords {
        var decoder = EntryDecoder(parallel: parallel)
        var gathered = SlotFiling(capacity: records.count)
        var others: [DecodedChange] = []
        // By index: a record copied whole would retain and release its name, an object of its own
        // per record, besides the reference its row keeps.
        for index in records.indices where records[index].id.kind != .layout {
            guard let kind = credentialKind(records[index].id.kind) else {
                others.append(try decode(records[index], with: &decoder))
                continue
            }
            let (ordinal, slots) = try decoder.filingSlots(payload: records[index].payload)
            let keyText = records[index].id.nameText
            gathered.add(
                EntryTable.Row(
                    id: EntryID(kind: kind, keyText: keyText, keyHash: keyHashes?[index]),
                    ordinal: ordinal,
                    source: .payload(records[index].bytes)
                ),
                kind: kind, slots: slots, decoder: decoder)
        }
        return (gathered.filing(&decoder), others)
    }
}
