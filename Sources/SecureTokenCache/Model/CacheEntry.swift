/// Any one of the five MSAL entry kinds.
enum CacheEntry: Sendable, Hashable {
    case accessToken(AccessToken)
    case refreshToken(RefreshToken)
    case idToken(IdToken)
    case account(Account)
    case appMetadata(AppMetadata)

    /// Reads an entry of `kind` from its stored members.
    init(kind: CredentialKind, fields: JSONObject) {
        self.init(kind: kind, members: .object(fields), parts: EntryParts(fields))
    }

    /// Reads an entry of `kind` from its stored members, whose known ones `parts` picked out.
    init(kind: CredentialKind, members: EntryMembers, parts: borrowing EntryParts) {
        switch kind {
        case .accessToken: self = .accessToken(AccessToken(members: members, parts: parts))
        case .refreshToken: self = .refreshToken(RefreshToken(members: members, parts: parts))
        case .idToken: self = .idToken(IdToken(members: members, parts: parts))
        case .account: self = .account(Account(members: members, parts: parts))
        case .appMetadata: self = .appMetadata(AppMetadata(members: members, parts: parts))
        }
    }

    /// The members as the entry holds them (the record payload it was read from, if any).
    var members: EntryMembers {
        switch self {
        case .accessToken(let entry): entry.members
        case .refreshToken(let entry): entry.members
        case .idToken(let entry): entry.members
        case .account(let entry): entry.members
        case .appMetadata(let entry): entry.members
        }
    }

    /// The entry with its members held as `payload`, which encodes the same members (with
    /// another ordinal, say): nothing is parsed again.
    func holding(_ payload: ArraySlice<UInt8>) -> CacheEntry {
        func held<Model: EntryModel>(_ entry: Model) -> Model {
            Model(storage: EntryStorage(members: .payload(payload), parsed: entry.parsed))
        }
        switch self {
        case .accessToken(let entry): return .accessToken(held(entry))
        case .refreshToken(let entry): return .refreshToken(held(entry))
        case .idToken(let entry): return .idToken(held(entry))
        case .account(let entry): return .account(held(entry))
        case .appMetadata(let entry): return .appMetadata(held(entry))
        }
    }

    /// The section the entry belongs in.
    var kind: CredentialKind {
        switch self {
        case .accessToken: .accessToken
        case .refreshToken: .refreshToken
        case .idToken: .idToken
        case .account: .account
        case .appMetadata: .appMetadata
        }
    }

    /// Every member of the entry as stored.
    var fields: JSONObject { members.object }

    /// The key msal-python would file this entry under.
    var msalKey: String {
        switch self {
        case .accessToken(let entry): entry.msalKey
        case .refreshToken(let entry): entry.msalKey
        case .idToken(let entry): entry.msalKey
        case .account(let entry): entry.msalKey
        case .appMetadata(let entry): entry.msalKey
        }
    }

    /// The home account the entry belongs to, lower-cased; `nil` for app metadata and app-only tokens.
    var homeAccount: String? {
        switch self {
        case .accessToken(let entry): entry.homeAccountId?.normalised
        case .refreshToken(let entry): entry.homeAccountId?.normalised
        case .idToken(let entry): entry.homeAccountId?.normalised
        case .account(let entry): entry.homeAccountId.normalised
        case .appMetadata: nil
        }
    }

    /// ``homeAccount`` with its hash: what the index files the account's entries under.
    var homeAccountKey: HashedString? {
        switch self {
        case .accessToken(let entry): entry.homeAccountId?.key
        case .refreshToken(let entry): entry.homeAccountId?.key
        case .idToken(let entry): entry.homeAccountId?.key
        case .account(let entry): entry.homeAccountId.key
        case .appMetadata: nil
        }
    }

    /// The entry's shared storage as an identity: the same for every copy of the entry, another
    /// for an entry written again.
    var storageIdentity: ObjectIdentifier { ObjectIdentifier(storage) }

    /// The entry's shared storage, whose identity ``storageIdentity`` is: held to keep that
    /// identity from being given to another entry.
    var storage: any AnyObject & Sendable {
        switch self {
        case .accessToken(let entry): entry.storage
        case .refreshToken(let entry): entry.storage
        case .idToken(let entry): entry.storage
        case .account(let entry): entry.storage
        case .appMetadata(let entry): entry.storage
        }
    }

    /// The client the entry belongs to, lower-cased; `nil` for accounts.
    var client: String? {
        switch self {
        case .accessToken(let entry): entry.clientId.asciiLowercased
        case .refreshToken(let entry): entry.clientId.asciiLowercased
        case .idToken(let entry): entry.clientId.asciiLowercased
        case .appMetadata(let entry): entry.clientId.asciiLowercased
        case .account: nil
        }
    }
}

/// The identity of an entry in a cache: its kind and the key it is filed under. The key is
/// kept exactly as it came (another SDK's key shape stays as it was), as a string or as the
/// payload it derives from (``KeyText``).
struct EntryID: Sendable, Hashable, Comparable {
    /// The key. First, so that the kind fits in what the key leaves of its last word.
    let keyText: KeyText
    let kind: CredentialKind
    /// The key's ``StringHash``, computed once: an entry id is hashed by several maps of the
    /// index, and a key is often 150 characters long.
    let keyHash: Int

    init(kind: CredentialKind, key: String) {
        self.init(kind: kind, keyText: KeyText(key))
    }

    init(kind: CredentialKind, keyText: KeyText) {
        self.init(kind: kind, keyText: keyText, keyHash: keyText.stringHash)
    }

    /// The id of `keyText`, whose ``StringHash`` is `keyHash` when given: computed where the key's
    /// bytes were at hand, for a key held as its payload, which would be made again to be hashed.
    init(kind: CredentialKind, keyText: KeyText, keyHash: Int?) {
        let keyHash = keyHash ?? keyText.stringHash
        assert(keyHash == keyText.stringHash, "a key's hash that is not its StringHash")
        self.kind = kind
        self.keyText = keyText
        self.keyHash = keyHash
    }

    /// The key.
    var key: String { keyText.string }

    func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(keyHash)
    }

    static func == (lhs: EntryID, rhs: EntryID) -> Bool {
        lhs.keyHash == rhs.keyHash && lhs.kind == rhs.kind && lhs.keyText == rhs.keyText
    }

    static func < (lhs: EntryID, rhs: EntryID) -> Bool {
        (lhs.kind.creationOrder, lhs.key) < (rhs.kind.creationOrder, rhs.key)
    }
}

/// An entry as the index holds it: where it is filed, and its position in the MSAL document
/// (so an export writes entries in the order msal-python would).
///
/// A value of two references (the key and the entry's shared parts): the index's maps hold it
/// inline, so reaching an entry from a bucket is one pointer fewer, and opening a group allocates
/// no object per entry for it.
struct StoredEntry: Sendable, Hashable {
    let id: EntryID
    /// Global insertion order; an entry updated under the same key keeps its ordinal.
    let ordinal: UInt64
    let entry: CacheEntry

    init(id: EntryID, ordinal: UInt64, entry: CacheEntry) {
        self.id = id
        self.ordinal = ordinal
        self.entry = entry
    }

    /// Hashes the id and ordinal (equal entries have equal ones; the members need not be hashed).
    func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(ordinal)
    }
}
