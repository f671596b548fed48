/// One ``Grouping`` per map of the index a bulk filing fills: access tokens by bucket, refresh
/// tokens by owner and by family, accounts by home account and by username, app metadata by
/// client, and every entry by account.
///
/// A decoding thread gathers these keyed by interned slots (``SlotKey``, see ``SlotFiling``) and
/// converts them to the index's keys once per distinct key (``converted(accessToken:refreshToken:familyRefreshToken:text:)``);
/// a ``BulkFiling`` holds them keyed by the index's keys.
struct IndexGroupings<AccessTokenKey: PrehashedKey, RefreshTokenKey: PrehashedKey, TextKey: PrehashedKey>: Sendable {
    var accessTokens: Grouping<AccessTokenKey>
    var ownRefreshTokens: Grouping<RefreshTokenKey>
    var familyRefreshTokens: Grouping<RefreshTokenKey>
    var accountsByHome: Grouping<TextKey>
    var accountsByUsername: Grouping<TextKey>
    var appMetadataByClient: Grouping<TextKey>
    var entriesByAccount: Grouping<TextKey>

    /// Empty groupings with room for `capacity` entries of a cache shaped like real ones (a few
    /// access tokens per user, and one refresh token, id token and account each), so that their
    /// tables never grow while filling.
    init(capacity: Int = 0) {
        accessTokens = Grouping(rows: capacity, keys: capacity / 2)
        ownRefreshTokens = Grouping(rows: capacity / 6, keys: capacity / 6)
        familyRefreshTokens = Grouping(rows: capacity / 6, keys: capacity / 6)
        accountsByHome = Grouping(rows: capacity / 6, keys: capacity / 6)
        accountsByUsername = Grouping(rows: capacity / 6, keys: capacity / 6)
        appMetadataByClient = Grouping()
        entriesByAccount = Grouping(rows: capacity, keys: capacity / 6)
    }

    private init(
        accessTokens: Grouping<AccessTokenKey>, ownRefreshTokens: Grouping<RefreshTokenKey>,
        familyRefreshTokens: Grouping<RefreshTokenKey>, accountsByHome: Grouping<TextKey>,
        accountsByUsername: Grouping<TextKey>, appMetadataByClient: Grouping<TextKey>, entriesByAccount: Grouping<TextKey>
    ) {
        self.accessTokens = accessTokens
        self.ownRefreshTokens = ownRefreshTokens
        self.familyRefreshTokens = familyRefreshTokens
        self.accountsByHome = accountsByHome
        self.accountsByUsername = accountsByUsername
        self.appMetadataByClient = appMetadataByClient
        self.entriesByAccount = entriesByAccount
    }

    /// Adds every row of `other`, moved `offset` rows on, after the rows already here.
    mutating func append(_ other: IndexGroupings, offset: Int) {
        accessTokens.append(other.accessTokens, offset: offset)
        ownRefreshTokens.append(other.ownRefreshTokens, offset: offset)
        familyRefreshTokens.append(other.familyRefreshTokens, offset: offset)
        accountsByHome.append(other.accountsByHome, offset: offset)
        accountsByUsername.append(other.accountsByUsername, offset: offset)
        appMetadataByClient.append(other.appMetadataByClient, offset: offset)
        entriesByAccount.append(other.entriesByAccount, offset: offset)
    }

    /// The same rows under the keys the functions make of these (see ``Grouping/converted(_:)``):
    /// `text` makes the accounts', usernames', clients' and entries' keys, given which map it is
    /// for.
    func converted<A: PrehashedKey, R: PrehashedKey, T: PrehashedKey>(
        accessToken: (AccessTokenKey) -> A, refreshToken: (RefreshTokenKey) -> R, familyRefreshToken: (RefreshTokenKey) -> R,
        text: (TextKey, TextMap) -> T
    ) -> IndexGroupings<A, R, T> {
        IndexGroupings<A, R, T>(
            accessTokens: accessTokens.converted(accessToken),
            ownRefreshTokens: ownRefreshTokens.converted(refreshToken),
            familyRefreshTokens: familyRefreshTokens.converted(familyRefreshToken),
            accountsByHome: accountsByHome.converted { text($0, .accountsByHome) },
            accountsByUsername: accountsByUsername.converted { text($0, .accountsByUsername) },
            appMetadataByClient: appMetadataByClient.converted { text($0, .appMetadataByClient) },
            entriesByAccount: entriesByAccount.converted { text($0, .entriesByAccount) })
    }
}

/// The maps of ``IndexGroupings`` keyed by a single text.
enum TextMap {
    case accountsByHome, accountsByUsername, appMetadataByClient, entriesByAccount
}
