/// One part of the keys the index files entries under (``IndexMaps/table``), as the maps compare
/// it: the user, the cloud's alias group, the tenant, the client, the token type, the extended
/// cache key, the FOCI family, the username, the on-behalf-of assertion.
///
/// A part is read two ways: from a typed entry, which made its keys when it was read, and from a
/// member's interned text, when a group opens without making typed entries. Both apply the same
/// normalisation, written here per part, so an opened group files every entry as writing it did.
enum FilingPart: Int, Sendable, CaseIterable {
    /// The lower-cased home account id.
    case account
    /// The alias group of the cloud.
    case cloud
    /// The lower-cased tenant.
    case realm
    /// The lower-cased client id.
    case client
    /// The lower-cased token type, `bearer` when there is none.
    case tokenType
    /// The lower-cased extended cache key.
    case extCacheKey
    /// The FOCI family id, as written.
    case family
    /// The lower-cased username.
    case username
    /// The on-behalf-of assertion hash, lower-cased and without padding
    /// (``UserAssertion/key(of:)``).
    case assertion

    /// The known member the part is read from; `nil` for ``assertion``, read from a member
    /// stored by name (``UserAssertion/memberNames``).
    var field: KnownField? {
        switch self {
        case .account: .homeAccountId
        case .cloud: .environment
        case .realm: .realm
        case .client: .clientId
        case .tokenType: .tokenType
        case .extCacheKey: .extCacheKey
        case .family: .familyId
        case .username: .username
        case .assertion: nil
        }
    }

    /// What a key holds for this part when the entry has none (no member, an empty one, or one
    /// that is neither a string nor a number) and its map does not require it.
    var absentKey: HashedString { self == .tokenType ? .bearer : .empty }

    /// The part of a typed entry; `nil` when the entry has none. An account always has a user, if
    /// only the empty id. Only the parts its kind is filed by are read from a typed entry (see
    /// ``IndexMaps/table``): the others are `nil`.
    func key(of entry: CacheEntry) -> HashedString? {
        switch (self, entry) {
        case (.account, _): entry.homeAccountKey
        case (.cloud, .accessToken(let token)): token.bucket.environment
        case (.cloud, .refreshToken(let token)): token.environment.groupKey
        case (.realm, .accessToken(let token)): token.bucket.realm
        case (.client, .accessToken(let token)): token.bucket.client
        case (.client, .refreshToken(let token)): token.clientKey
        case (.client, .appMetadata(let metadata)): metadata.clientKey
        case (.tokenType, .accessToken(let token)): token.bucket.tokenType
        case (.extCacheKey, .accessToken(let token)): token.bucket.extCacheKey
        case (.family, .refreshToken(let token)): token.familyKey
        case (.username, .account(let account)): account.username.isEmpty ? nil : account.usernameKey
        case (.assertion, .accessToken(let token)): token.assertionKey
        case (.assertion, .refreshToken(let token)): token.assertionKey
        default: nil
        }
    }

    /// Whether an entry of `kind` whose member `decoder` interned at `slot` has this part, as
    /// ``key(of:)`` would say of the typed entry.
    func isPresent(slot: Int32, kind: CredentialKind, decoder: borrowing EntryDecoder) -> Bool {
        (self == .account && kind == .account) || decoder.hasText(slot)
    }

    /// The part of a member `decoder` interned at `slot`; `nil` when it has no text.
    func key(slot: Int32, decoder: inout EntryDecoder) -> HashedString? {
        guard decoder.hasText(slot) else { return nil }
        switch self {
        case .account, .realm, .client, .tokenType, .extCacheKey, .username: return decoder.lowercasedKey(slot)
        case .cloud: return decoder.cloudKey(slot)
        case .family: return decoder.exactKey(slot)
        case .assertion: return decoder.assertionKey(slot)
        }
    }
}
