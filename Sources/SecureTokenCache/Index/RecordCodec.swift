/// Turns index contents into store records and back.
///
/// An entry record is named by its cache key and holds a version byte, its ordinal (8 bytes,
/// little-endian) and its members as compact JSON. Stores seal every payload.
enum RecordCodec {
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

    static func credentialKind(_ kind: RecordKind) -> CredentialKind? {
        switch kind {
        case .accessToken: .accessToken
        case .refreshToken: .refreshToken
        case .idToken: .idToken
        case .account: .account
        case .appMetadata: .appMetadata
        case .layout, .unknownSection, .clientState, .tenantAlias: nil
        }
    }

    static func recordID(_ id: EntryID) -> RecordID { RecordID(kind: recordKind(id.kind), name: id.key) }

    static func record(_ stored: StoredEntry) -> Record {
        var payload: [UInt8] = [formatVersion]
        payload.reserveCapacity(512)
        withUnsafeBytes(of: stored.ordinal.littleEndian) { payload.append(contentsOf: $0) }
        CompactJSONWriter.write(.object(stored.entry.fields), into: &payload)
        return Record(id: recordID(stored.id), payload: payload)
    }

    static func record(clientState: ClientState, client: String) -> Record {
        var payload: [UInt8] = [formatVersion]
        CompactJSONWriter.write(clientState.json, into: &payload)
        return Record(id: RecordID(kind: .clientState, name: client), payload: payload)
    }

    static func record(tenantAlias name: String, tenantId: String) -> Record {
        var payload: [UInt8] = [formatVersion]
        payload.append(contentsOf: tenantId.utf8)
        return Record(id: RecordID(kind: .tenantAlias, name: name), payload: payload)
    }

    static func record(sections: [String]) -> Record {
        var payload: [UInt8] = [formatVersion]
        CompactJSONWriter.write(.array(sections.map(JSONValue.string)), into: &payload)
        return Record(id: RecordID(kind: .layout, name: layoutName), payload: payload)
    }

    static func record(unknownSection name: String, value: JSONValue) -> Record {
        var payload: [UInt8] = [formatVersion]
        CompactJSONWriter.write(value, into: &payload)
        return Record(id: RecordID(kind: .unknownSection, name: name), payload: payload)
    }

    private static func body(_ payload: [UInt8], headerSize: Int) throws -> JSONValue {
        guard payload.count > headerSize, payload[0] == formatVersion else {
            throw TokenCacheError(
                .unsupportedFormat, "a record has an unknown format; upgrade SecureTokenCache to read this group")
        }
        return try JSONParser.parse(payload[headerSize...])
    }

    /// Applies one store change to an index.
    static func apply(_ change: RecordChange, to index: inout Index) throws {
        switch change {
        case .delete(let id):
            if let kind = credentialKind(id.kind) {
                index.remove(EntryID(kind: kind, key: id.name))
            } else if id.kind == .clientState {
                index.setClientState(ClientState(), for: id.name)
            } else if id.kind == .unknownSection {
                index.setUnknownSection(id.name, nil)
            } else if id.kind == .tenantAlias {
                index.setTenantAlias(id.name, nil)
            }
        case .put(let record):
            try apply(record, to: &index)
        }
    }

    /// Files one record into an index.
    static func apply(_ record: Record, to index: inout Index) throws {
        do {
            switch record.id.kind {
            case .layout:
                guard case .array(let names) = try body(record.payload, headerSize: 1) else {
                    throw TokenCacheError(.storeCorrupted, "the section layout record is not a JSON array")
                }
                index.setSections(names.compactMap(\.stringValue))
            case .unknownSection:
                index.setUnknownSection(record.id.name, try body(record.payload, headerSize: 1))
            case .clientState:
                index.setClientState(try ClientState(json: try body(record.payload, headerSize: 1)), for: record.id.name)
            case .tenantAlias:
                guard record.payload.first == formatVersion else {
                    throw TokenCacheError(
                        .unsupportedFormat, "a record has an unknown format; upgrade SecureTokenCache to read this group")
                }
                index.setTenantAlias(record.id.name, String(decoding: record.payload.dropFirst(), as: UTF8.self))
            case .accessToken, .refreshToken, .idToken, .account, .appMetadata:
                let kind = credentialKind(record.id.kind)!
                guard record.payload.count >= 9 else {
                    throw TokenCacheError(.storeCorrupted, "an entry record is shorter than its header")
                }
                var ordinal: UInt64 = 0
                for byte in record.payload[1..<9].reversed() { ordinal = ordinal << 8 | UInt64(byte) }
                guard case .object(let fields) = try body(record.payload, headerSize: 9) else {
                    throw TokenCacheError(.storeCorrupted, "an entry record is not a JSON object")
                }
                index.insert(
                    StoredEntry(
                        id: EntryID(kind: kind, key: record.id.name), ordinal: ordinal,
                        entry: CacheEntry(kind: kind, fields: fields)))
            }
        } catch let error as TokenCacheError where error.code == .malformedCache {
            throw TokenCacheError(.storeCorrupted, "a record holds invalid JSON: the group is damaged")
        }
    }

    /// Applies a store update (catch-up) to an index.
    static func apply(_ update: StoreUpdate, to index: inout Index) throws {
        switch update {
        case .unchanged: break
        case .changes(let changes, _):
            for change in changes { try apply(change, to: &index) }
        case .reload(let records, _):
            index = try build(records)
        }
    }

    /// Builds an index from a store's records.
    static func build(_ records: [Record]) throws -> Index {
        var index = Index()
        // The layout first, so entry insertions do not invent a section order.
        for record in records where record.id.kind == .layout { try apply(record, to: &index) }
        for record in records where record.id.kind != .layout { try apply(record, to: &index) }
        return index
    }
}

/// Compact JSON (no whitespace), for record payloads.
enum CompactJSONWriter {
    static func write(_ value: JSONValue, into output: inout [UInt8]) {
        switch value {
        case .string(let text): PythonJSONWriter.writeString(text, into: &output)
        case .number(let literal): output.append(contentsOf: literal.utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .null: output.append(contentsOf: "null".utf8)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                write(element, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for (position, member) in object.members.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                PythonJSONWriter.writeString(member.key, into: &output)
                output.append(UInt8(ascii: ":"))
                write(member.value, into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }
}
