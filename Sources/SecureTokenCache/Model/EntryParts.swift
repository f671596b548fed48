/// An MSAL member the engine reads, with the one-byte code the record encoding stores in place
/// of its name (see ``EntryPayload``).
///
/// The codes are stored in every sealed entry: never renumber, only append (below 32: see
/// ``EntryParts``).
enum KnownField: UInt8, CaseIterable, Sendable {
    case credentialType = 1
    case secret = 2
    case homeAccountId = 3
    case environment = 4
    case clientId = 5
    case realm = 6
    case target = 7
    case cachedAt = 8
    case expiresOn = 9
    case extendedExpiresOn = 10
    case extExpiresOn = 11
    case refreshOn = 12
    case tokenType = 13
    case keyId = 14
    case extCacheKey = 15
    case familyId = 16
    case lastModificationTime = 17
    case localAccountId = 18
    case username = 19
    case authorityType = 20
    case name = 21
    case clientInfo = 22
    case accountSource = 23
    /// MSAL.NET's cache key components (`ext`): an object of the extra parameters an access
    /// token was requested with, which its key hashes in place of `ext_cache_key`.
    case extComponents = 24

    /// The member name as MSAL writes it.
    var name: String {
        switch self {
        case .credentialType: "credential_type"
        case .secret: "secret"
        case .homeAccountId: "home_account_id"
        case .environment: "environment"
        case .clientId: "client_id"
        case .realm: "realm"
        case .target: "target"
        case .cachedAt: "cached_at"
        case .expiresOn: "expires_on"
        case .extendedExpiresOn: "extended_expires_on"
        case .extExpiresOn: "ext_expires_on"
        case .refreshOn: "refresh_on"
        case .tokenType: "token_type"
        case .keyId: "key_id"
        case .extCacheKey: "ext_cache_key"
        case .familyId: "family_id"
        case .lastModificationTime: "last_modification_time"
        case .localAccountId: "local_account_id"
        case .username: "username"
        case .authorityType: "authority_type"
        case .name: "name"
        case .clientInfo: "client_info"
        case .accountSource: "account_source"
        case .extComponents: "ext"
        }
    }

    /// The field a member name stands for, if the engine knows it (names are case-sensitive,
    /// as in every MSAL SDK).
    init?(name: String) {
        var name = name
        guard let field = name.withUTF8({ KnownField(utf8Name: UnsafeRawBufferPointer($0)) }) else { return nil }
        self = field
    }

    /// The field a member name, given as its UTF-8 bytes, stands for, if the engine knows it.
    ///
    /// Every member of every entry read or written is looked up: a `switch` over the names
    /// compares a name with one case after another, where this compares its bytes, as three
    /// words, with those of the one to three names of its length.
    init?(utf8Name name: UnsafeRawBufferPointer) {
        let table = Self.byLength
        let first = name.count * Self.namesPerLength * 4
        guard first < table.count else { return nil }
        let words = (WordBytes.load(name, at: 0), WordBytes.load(name, at: 8), WordBytes.load(name, at: 16))
        var slot = first
        while slot < first + Self.namesPerLength * 4, table[slot] != 0 {
            if table[slot + 1] == words.0, table[slot + 2] == words.1, table[slot + 3] == words.2 {
                self.init(rawValue: UInt8(truncatingIfNeeded: table[slot]))
                return
            }
            slot += 4
        }
        return nil
    }

    /// How many names of one length ``byLength`` has room for.
    private static let namesPerLength = 4

    /// The names of each length, made from ``name``: ``namesPerLength`` slots per length, each
    /// four words: the code (0: no more names of the length) and the name's bytes as three
    /// words (``WordBytes/load(_:at:)``).
    private static let byLength: [UInt64] = {
        let longest = allCases.map(\.name.utf8.count).max()!
        var table = [UInt64](repeating: 0, count: (longest + 1) * namesPerLength * 4)
        for field in allCases {
            var name = field.name
            precondition(name.utf8.count <= 24, "a known member's name fits in three words")
            let first = name.utf8.count * namesPerLength * 4
            let slot = stride(from: first, to: first + namesPerLength * 4, by: 4).first { table[$0] == 0 }!
            table[slot] = UInt64(field.rawValue)
            name.withUTF8 { bytes in
                for part in 0..<3 { table[slot + 1 + part] = WordBytes.load(UnsafeRawBufferPointer(bytes), at: 8 * part) }
            }
        }
        return table
    }()

    /// The largest code of a field.
    static let largestCode = Int(allCases.map(\.rawValue).max()!)

    /// Every field by code (index 0 unused), for decoding without a `switch`.
    static let byCode: [KnownField?] = {
        var table = [KnownField?](repeating: nil, count: Int(UInt8.max) + 1)
        for field in allCases { table[Int(field.rawValue)] = field }
        return table
    }()
}

/// An entry's members as it holds them: a ``JSONObject``, or the record payload they were read
/// from (see ``EntryPayload``), decoded again only when asked for (an export, a rewrite, a
/// `cachetool show`). Opening a group then builds no member list per entry: it reads the known
/// members into ``EntryParts`` and keeps the payload it already had.
enum EntryMembers: Sendable {
    case object(JSONObject)
    case payload(ArraySlice<UInt8>)

    /// The members as an object.
    var object: JSONObject {
        switch self {
        case .object(let object): object
        case .payload(let payload): EntryPayload.members(of: payload)
        }
    }

    /// A known member as text (a string, or a number's literal, as ``JSONObject``'s `string(_:)`
    /// reads it), without making the other members into an object.
    func string(_ field: KnownField) -> String? {
        switch self {
        case .object(let object): object.string(field.name)
        case .payload(let payload): EntryPayload.string(field, of: payload)
        }
    }

    /// A known member's value, without making the other members into an object.
    func value(_ field: KnownField) -> JSONValue? {
        switch self {
        case .object(let object): object[field.name]
        case .payload(let payload): EntryPayload.value(field, of: payload)
        }
    }
}

/// The members of an entry the typed entries read, picked out of its ``JSONObject`` in one pass.
///
/// The record decoder fills it while decoding, together with the typed values it already made for
/// an equal string (one ``HomeAccountId``, ``Environment`` or ``Scopes`` per distinct string in a
/// group instead of one per entry); an entry built from parts reads exactly what
/// `init(fields:)` reads from the same members.
struct EntryParts {
    /// Where each known member's value is in ``values``, by ``KnownField`` code (0: none, else
    /// its position plus one). Plain bytes, with the values in one array: the parts are made,
    /// copied and dropped for every entry built or read, and a table of values by code would be
    /// that many values to copy and destroy one by one.
    private var valueSlots = InlineArray<32, UInt8>(repeating: 0)
    private var values: [JSONValue?] = []
    /// Where each lower-cased member with its hash (made once per distinct string by the
    /// decoder) is in ``keys``, by code, as ``valueSlots``.
    private var keySlots = InlineArray<32, UInt8>(repeating: 0)
    private var keys: [HashedString] = []
    /// `home_account_id` already parsed (the outer optional: whether it was; the inner: the
    /// value `AccessToken` and the other credentials keep, `nil` for an empty id).
    var homeAccount: HomeAccountId??
    /// `environment` already parsed.
    var cloud: Environment?
    /// `target` already parsed.
    var scopes: Scopes?
    /// The on-behalf-of assertion hash (a member ``UserAssertion/memberNames`` names). Kept
    /// apart from the known members: it is stored by name, so that records holding it stay
    /// readable by builds that do not know it.
    var assertionHash: String?

    /// No members yet.
    init() {}

    /// No members yet, with room for `capacity` of them.
    init(capacity: Int) {
        values.reserveCapacity(capacity)
    }

    /// Forgets every member, keeping the storage (a decoder reuses one value for every entry).
    mutating func reset() {
        valueSlots = InlineArray(repeating: 0)
        keySlots = InlineArray(repeating: 0)
        values.removeAll(keepingCapacity: true)
        keys.removeAll(keepingCapacity: true)
        homeAccount = nil
        cloud = nil
        scopes = nil
        assertionHash = nil
    }

    /// The known members of `fields`.
    init(_ fields: JSONObject) {
        self.init(capacity: fields.count)
        for member in fields.members {
            if let field = KnownField(name: member.key) {
                self[field] = member.value
            } else if UserAssertion.memberNames.contains(member.key) {
                // Text as the known members' (``string(_:)``): a string or a number's literal.
                switch member.value {
                case .string(let text), .number(let text): assertionHash = text
                default: assertionHash = nil
                }
            }
        }
    }

    /// Takes the parsed forms of the members many entries share (account, cloud, scopes, index
    /// keys) from `interner`, which makes each once per distinct string.
    mutating func share(with interner: inout StringInterner) {
        for field in [KnownField.homeAccountId, .environment, .target, .clientId, .realm, .tokenType, .extCacheKey] {
            guard case .string(var text) = self[field] else { continue }
            let slot = text.withUTF8 { interner.slot(of: UnsafeRawBufferPointer($0)) }
            switch field {
            case .homeAccountId: homeAccount = interner.homeAccountId(at: slot)
            case .environment: cloud = interner.environment(at: slot)
            case .target: scopes = interner.scopes(at: slot)
            default: setLowercasedKey(interner.lowercasedKey(at: slot), for: field)
            }
        }
    }

    /// The value of a known member.
    subscript(field: KnownField) -> JSONValue? {
        get {
            let slot = Int(valueSlots[Int(field.rawValue)])
            return slot == 0 ? nil : values[slot - 1]
        }
        set {
            // A code takes one position, the first time it is set.
            let slot = Int(valueSlots[Int(field.rawValue)])
            if slot != 0 {
                values[slot - 1] = newValue
            } else if let newValue {
                values.append(newValue)
                valueSlots[Int(field.rawValue)] = UInt8(values.count)
            }
        }
    }

    /// The member as text: a string, or a number's literal (``JSONObject``'s `string(_:)` rule).
    func string(_ field: KnownField) -> String? {
        switch self[field] {
        case .string(let text): text
        case .number(let literal): literal
        default: nil
        }
    }

    /// Remembers the lower-cased key of a member's string (made once by the decoder).
    mutating func setLowercasedKey(_ key: HashedString, for field: KnownField) {
        let slot = Int(keySlots[Int(field.rawValue)])
        if slot != 0 {
            keys[slot - 1] = key
        } else {
            keys.append(key)
            keySlots[Int(field.rawValue)] = UInt8(keys.count)
        }
    }

    /// The member's text, lower-cased, with its hash (`""` when missing): what the index files by.
    func lowercasedKey(_ field: KnownField) -> HashedString {
        let slot = Int(keySlots[Int(field.rawValue)])
        return slot != 0 ? keys[slot - 1] : HashedString((string(field) ?? "").asciiLowercased)
    }

    /// The member as whole seconds (``JSONValue/integerValue``).
    func seconds(_ field: KnownField) -> Int64? { self[field]?.integerValue }

    /// The credential's user, `nil` when missing or empty.
    func credentialHomeAccountId() -> HomeAccountId? {
        if let parsed = homeAccount { return parsed }
        return string(.homeAccountId).flatMap { $0.isEmpty ? nil : HomeAccountId($0) }
    }

    /// An account entry's user (an account always has one, if only an empty id).
    func accountHomeAccountId() -> HomeAccountId {
        (homeAccount ?? nil) ?? HomeAccountId(string(.homeAccountId) ?? "")
    }

    /// The FOCI family of a refresh token or app metadata, `nil` when missing or empty.
    func familyId() -> String? {
        string(.familyId).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The index key of an on-behalf-of token's assertion hash, `nil` when it has none.
    func assertionKey() -> HashedString? {
        assertionHash.flatMap(UserAssertion.key(of:))
    }

    /// The extended cache key of an access token, `nil` when it has none: its `ext_cache_key`
    /// (msal-python, Go), else the key of MSAL.NET's components (``ExtendedCacheKey/of(dotNet:)``).
    func extCacheKey() -> String? {
        if let key = string(.extCacheKey), !key.isEmpty { return key }
        return self[.extComponents].flatMap(ExtendedCacheKey.of(dotNet:))
    }

    /// ``extCacheKey()`` as the index files it: lower-cased, with its hash; `.empty` for none.
    func extCacheKeyFilingKey() -> HashedString {
        if let key = string(.extCacheKey), !key.isEmpty { return lowercasedKey(.extCacheKey) }
        return self[.extComponents].flatMap(ExtendedCacheKey.of(dotNet:)).map(HashedString.init) ?? .empty
    }

    /// The entry's cloud.
    func environment() -> Environment {
        cloud ?? Environment(string(.environment) ?? "")
    }

    /// The granted scopes.
    func grantedScopes() -> Scopes {
        scopes ?? Scopes(target: string(.target) ?? "")
    }
}
