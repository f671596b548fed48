/// The maps of an index that find entries by something other than their id, and the table that
/// says how entries are filed in each (``table``): the one place that rule is written.
///
/// Every map is persistent (a ``LayeredMap``): a copy is O(1), and a write touches O(log n)
/// nodes, so readers keep their snapshot while a writer builds the next.
struct IndexMaps: Sendable {
    /// Owner (client or family) → account → how many refresh tokens the owner has there.
    typealias Tally = LayeredMap<HashedString, LayeredMap<HashedString, Int>>

    /// Access tokens by bucket, held in the bucket itself: a hit hashes one key, not two.
    /// On-behalf-of tokens are not here: they answer only their assertion's holder.
    var accessTokens = LayeredMap<AccessTokenBucket, Filed<StoredEntry>>()
    /// On-behalf-of access tokens by bucket, whose account part is the assertion hash's key
    /// (MSAL.NET files them by it, and its silent lookups do not see them either).
    var onBehalfOfAccessTokens = LayeredMap<AccessTokenBucket, Filed<StoredEntry>>()
    /// Refresh tokens by account, cloud and owning client. A long-running on-behalf-of
    /// session's are not here: they redeem only for that session.
    var ownRefreshTokens = LayeredMap<RefreshTokenBucket, Filed<EntryID>>()
    /// Refresh tokens of long-running on-behalf-of sessions, by bucket, whose account part is
    /// the session key's (``UserAssertion/key(of:)``).
    var onBehalfOfRefreshTokens = LayeredMap<RefreshTokenBucket, Filed<EntryID>>()
    /// Family refresh tokens by account, cloud and family.
    var familyRefreshTokens = LayeredMap<RefreshTokenBucket, Filed<EntryID>>()
    /// Client → accounts with a refresh token of that client → how many.
    var accountsWithClientToken = Tally()
    /// Family → accounts with a refresh token of that family → how many.
    var accountsWithFamilyToken = Tally()
    /// Account entries (every tenant) by home account.
    var accountsByHome = LayeredMap<HashedString, Filed<EntryID>>()
    /// Account entries by lower-cased username.
    var accountsByUsername = LayeredMap<HashedString, Filed<EntryID>>()
    /// App metadata by client.
    var appMetadataByClient = LayeredMap<HashedString, Filed<EntryID>>()
    /// Every entry of an account, for every client.
    var entriesByAccount = LayeredMap<HashedString, Filed<EntryID>>()

    /// An index's maps with nothing filed.
    init() {}

    /// Which entry goes in which map, under which key: every filing, one entry at a time or a
    /// whole group at once, is derived from these rows.
    static let table: [IndexMapRule] = [
        .rule(
            \.accessTokens,
            MapFiling(
                [.accessToken], by: [.account, .cloud, .realm, .client, .tokenType, .extCacheKey], excluding: .assertion,
                reserve: (1, 2))),
        .rule(
            \.onBehalfOfAccessTokens,
            MapFiling(
                [.accessToken], by: [.assertion, .cloud, .realm, .client, .tokenType, .extCacheKey], requiring: .assertion,
                reserve: (0, 0))),
        .rule(
            \.ownRefreshTokens,
            MapFiling([.refreshToken], by: [.account, .cloud, .client], excluding: .assertion, reserve: (6, 6)),
            tally: (\.accountsWithClientToken, { ($0.owner, $0.account) })),
        .rule(
            \.familyRefreshTokens,
            MapFiling(
                [.refreshToken], by: [.account, .cloud, .family], requiring: .family, excluding: .assertion, reserve: (6, 6)),
            tally: (\.accountsWithFamilyToken, { ($0.owner, $0.account) })),
        .rule(
            \.onBehalfOfRefreshTokens,
            MapFiling([.refreshToken], by: [.assertion, .cloud, .client], requiring: .assertion, reserve: (0, 0))),
        .rule(\.accountsByHome, MapFiling([.account], by: [.account], reserve: (6, 6))),
        .rule(\.accountsByUsername, MapFiling([.account], by: [.username], requiring: .username, reserve: (6, 6))),
        .rule(\.appMetadataByClient, MapFiling([.appMetadata], by: [.client], reserve: (0, 0))),
        .rule(
            \.entriesByAccount,
            MapFiling([.accessToken, .refreshToken, .idToken, .account], by: [.account], requiring: .account, reserve: (1, 6))),
    ]

    /// The filing of each row of ``table``, in order.
    static let filings = table.map(\.filing)

    /// Files `stored` in every map it belongs in, or takes it out of them unless `adding`.
    mutating func file(_ stored: StoredEntry, adding: Bool) {
        for rule in Self.table { rule.file(stored, adding: adding, in: &self) }
    }

    /// Puts `stored` in place of the entry with its id, which was filed under the same keys
    /// (``filesAlike(_:_:)``): only maps that hold entries rather than ids change.
    mutating func refile(_ stored: StoredEntry) {
        for rule in Self.table { rule.refile(stored, in: &self) }
    }

    /// Whether two entries are filed under the same keys in every map.
    ///
    /// Whether a map files an entry, and under which key, depends only on its kind and on its
    /// parts (``FilingPart/key(of:)``, which gives none for a part its kind is not filed by), so
    /// two entries of one kind with every part the same file alike everywhere: each part read
    /// once, not once per map that uses it. Entries that differ in a part may still file alike
    /// (a part missing and one holding what stands for it), which the maps then say.
    static func filesAlike(_ old: CacheEntry, _ new: CacheEntry) -> Bool {
        if old.kind == new.kind, allParts.allSatisfy({ $0.key(of: old) == $0.key(of: new) }) { return true }
        return table.allSatisfy { $0.filesAlike(old, new) }
    }

    private static let allParts = FilingPart.allCases
}
