/// The keys the index files a typed entry under, besides its id.
///
/// Opening a group files entries without making them typed: the decoder interns the members
/// these keys are made of, and ``SlotFiling`` makes each key once per distinct group of them,
/// reading what this type reads from a typed entry.
enum FilingKeys: Sendable, Hashable {
    case accessToken(AccessTokenBucket, account: HashedString?)
    case refreshToken(account: HashedString?, environment: HashedString, client: HashedString, family: HashedString?)
    case idToken(account: HashedString?)
    case account(home: HashedString, username: HashedString?)
    case appMetadata(client: HashedString)

    /// The keys of a typed entry.
    init(_ entry: CacheEntry) {
        switch entry {
        case .accessToken(let token):
            self = .accessToken(token.bucket, account: token.homeAccountId?.key)
        case .refreshToken(let token):
            self = .refreshToken(
                account: token.homeAccountId?.key, environment: token.environment.groupKey, client: token.clientKey,
                family: token.familyKey)
        case .idToken(let token):
            self = .idToken(account: token.homeAccountId?.key)
        case .account(let account):
            self = .account(home: account.homeAccountId.key, username: account.username.isEmpty ? nil : account.usernameKey)
        case .appMetadata(let metadata):
            self = .appMetadata(client: metadata.clientKey)
        }
    }

    /// The home account every entry of the user is filed under; `nil` for app metadata and
    /// app-only tokens (``CacheEntry/homeAccountKey``).
    var homeAccount: HashedString? {
        switch self {
        case .accessToken(_, let account), .refreshToken(let account, _, _, _), .idToken(let account): account
        case .account(let home, _): home
        case .appMetadata: nil
        }
    }
}
