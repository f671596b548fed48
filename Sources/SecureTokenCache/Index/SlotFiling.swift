/// Where the members an entry is filed by are in a decoder's ``StringInterner``: one slot per
/// member, -1 for a member with no text (missing, or not a string or number).
struct FilingSlots: Sendable {
    var account: Int32 = -1
    var environment: Int32 = -1
    var realm: Int32 = -1
    var client: Int32 = -1
    var tokenType: Int32 = -1
    var extCacheKey: Int32 = -1
    var family: Int32 = -1
    var username: Int32 = -1

    /// The slots of the members in `texts`, by member code.
    init(_ texts: borrowing InlineArray<32, Int32>) {
        account = texts[Int(KnownField.homeAccountId.rawValue)]
        environment = texts[Int(KnownField.environment.rawValue)]
        realm = texts[Int(KnownField.realm.rawValue)]
        client = texts[Int(KnownField.clientId.rawValue)]
        tokenType = texts[Int(KnownField.tokenType.rawValue)]
        extCacheKey = texts[Int(KnownField.extCacheKey.rawValue)]
        family = texts[Int(KnownField.familyId.rawValue)]
        username = texts[Int(KnownField.username.rawValue)]
    }
}

/// Up to six interned slots, as one key: what a decoding thread groups entries by before any
/// index key (a ``HashedString``, a bucket) is made. Hashing and comparing it touches no string
/// and no reference count.
struct SlotKey: PrehashedKey {
    var slots: (Int32, Int32, Int32, Int32, Int32, Int32)

    init(
        _ first: Int32, _ second: Int32 = -1, _ third: Int32 = -1, _ fourth: Int32 = -1, _ fifth: Int32 = -1, _ sixth: Int32 = -1
    ) {
        slots = (first, second, third, fourth, fifth, sixth)
    }

    var prehash: Int {
        let low = UInt64(UInt32(bitPattern: slots.0)) | UInt64(UInt32(bitPattern: slots.1)) << 32
        let middle = UInt64(UInt32(bitPattern: slots.2)) | UInt64(UInt32(bitPattern: slots.3)) << 32
        let high = UInt64(UInt32(bitPattern: slots.4)) | UInt64(UInt32(bitPattern: slots.5)) << 32
        var hash = HashMixer.combine(HashMixer.seed, Int(truncatingIfNeeded: low))
        hash = HashMixer.combine(hash, Int(truncatingIfNeeded: middle))
        return HashMixer.combine(hash, Int(truncatingIfNeeded: high))
    }

    static func == (lhs: SlotKey, rhs: SlotKey) -> Bool {
        lhs.slots.0 == rhs.slots.0 && lhs.slots.1 == rhs.slots.1 && lhs.slots.2 == rhs.slots.2
            && lhs.slots.3 == rhs.slots.3 && lhs.slots.4 == rhs.slots.4 && lhs.slots.5 == rhs.slots.5
    }

    func hash(into hasher: inout Hasher) { hasher.combine(prehash) }
}

/// A decoding thread's part of a bulk filing (``BulkFiling``), gathered by interned slots.
///
/// Making an entry's index keys (a bucket of six ``HashedString``s, say) and hashing them per
/// entry cost most of what decoding a record for filing cost. Entries of one user repeat the
/// same few keys, so the thread groups rows by the slots of their members (``SlotKey``) and
/// makes each index key once per distinct group when it finishes (``filing(_:)``): what
/// ``FilingKeys/init(_:)`` reads from the typed entry, read from the interned text instead.
struct SlotFiling: Sendable {
    private var rows: GatheredRows
    private var maps: IndexGroupings<SlotKey, SlotKey, SlotKey>

    /// Room for `capacity` entries (see ``IndexGroupings/init(capacity:)``).
    init(capacity: Int) {
        rows = GatheredRows(capacity: capacity)
        maps = IndexGroupings(capacity: capacity)
    }

    /// Gathers `row`, an entry of `kind` whose members `decoder` interned at `slots`.
    mutating func add(_ row: consuming EntryTable.Row, kind: CredentialKind, slots: FilingSlots, decoder: borrowing EntryDecoder)
    {
        let position = rows.add(row)
        // A credential with no user is filed under none (``FilingKeys/homeAccount``); an account
        // always is, if only under the empty id.
        let user = decoder.hasText(slots.account) ? slots.account : -1
        switch kind {
        case .accessToken:
            maps.accessTokens.add(
                position,
                to: SlotKey(user, slots.environment, slots.realm, slots.client, slots.tokenType, slots.extCacheKey))
            if user >= 0 { maps.entriesByAccount.add(position, to: SlotKey(user)) }
        case .refreshToken:
            maps.ownRefreshTokens.add(position, to: SlotKey(user, slots.environment, slots.client))
            if decoder.hasText(slots.family) {
                maps.familyRefreshTokens.add(position, to: SlotKey(user, slots.environment, slots.family))
            }
            if user >= 0 { maps.entriesByAccount.add(position, to: SlotKey(user)) }
        case .idToken:
            if user >= 0 { maps.entriesByAccount.add(position, to: SlotKey(user)) }
        case .account:
            maps.accountsByHome.add(position, to: SlotKey(user))
            if decoder.hasText(slots.username) { maps.accountsByUsername.add(position, to: SlotKey(slots.username)) }
            maps.entriesByAccount.add(position, to: SlotKey(user))
        case .appMetadata:
            maps.appMetadataByClient.add(position, to: SlotKey(slots.client))
        }
    }

    /// The filing, every group's index key made from `decoder`'s interned text.
    consuming func filing(_ decoder: inout EntryDecoder) -> BulkFiling {
        let maps = self.maps.converted(
            accessToken: { key in
                AccessTokenBucket(
                    account: decoder.accountKey(key.slots.0) ?? .empty, environment: decoder.cloudKey(key.slots.1),
                    realm: decoder.lowercasedKey(key.slots.2), client: decoder.lowercasedKey(key.slots.3),
                    tokenType: decoder.hasText(key.slots.4) ? decoder.lowercasedKey(key.slots.4) : .bearer,
                    extCacheKey: decoder.hasText(key.slots.5) ? decoder.lowercasedKey(key.slots.5) : .empty)
            },
            refreshToken: { key in
                RefreshTokenBucket(
                    account: decoder.accountKey(key.slots.0) ?? .empty, environment: decoder.cloudKey(key.slots.1),
                    owner: decoder.lowercasedKey(key.slots.2))
            },
            familyRefreshToken: { key in
                RefreshTokenBucket(
                    account: decoder.accountKey(key.slots.0) ?? .empty, environment: decoder.cloudKey(key.slots.1),
                    owner: decoder.exactKey(key.slots.2))
            },
            text: { key, map in
                switch map {
                case .accountsByHome, .entriesByAccount: decoder.accountKey(key.slots.0) ?? .empty
                case .accountsByUsername, .appMetadataByClient: decoder.lowercasedKey(key.slots.0)
                }
            })
        return BulkFiling(rows: rows, maps: maps)
    }
}
