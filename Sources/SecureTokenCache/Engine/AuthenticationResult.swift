/// What a silent (or interactive) token acquisition gives the app: the access token to send,
/// how long it lives, what it is for, and where it came from.
///
/// Its `description` never shows the token.
public struct AuthenticationResult: Sendable, Hashable, CustomStringConvertible {
    /// The access token, to send as `Authorization: <tokenType> <accessToken>`. Never log it.
    public let accessToken: String
    /// When the token expires, in Unix seconds.
    public let expiresOn: Int64
    /// When the token's extended lifetime ends (usable while the authority is down), in Unix seconds.
    public let extendedExpiresOn: Int64?
    /// When the token should be renewed proactively (`refresh_on`), in Unix seconds.
    public let refreshOn: Int64?
    /// The scopes the token was granted.
    public let scopes: Scopes
    /// The account the token is for.
    public let account: Account
    /// The tenant the token was issued in.
    public let tenantId: String
    /// `Bearer` (the default), `pop` or `ssh-cert`.
    public let tokenType: String
    /// Whether the token came from the cache (`true`) or from a call to the authority (`false`).
    public let isFromCache: Bool

    /// A result with the given parts.
    public init(
        accessToken: String, expiresOn: Int64, extendedExpiresOn: Int64? = nil, refreshOn: Int64? = nil, scopes: Scopes,
        account: Account, tenantId: String, tokenType: String = "Bearer", isFromCache: Bool
    ) {
        self.accessToken = accessToken
        self.expiresOn = expiresOn
        self.extendedExpiresOn = extendedExpiresOn
        self.refreshOn = refreshOn
        self.scopes = scopes
        self.account = account
        self.tenantId = tenantId
        self.tokenType = tokenType
        self.isFromCache = isFromCache
    }

    /// The result for a cached (or just stored) access token.
    init(_ token: AccessToken, account: Account, isFromCache: Bool) {
        self.init(
            accessToken: token.secret, expiresOn: token.expiresOn, extendedExpiresOn: token.extendedExpiresOn,
            refreshOn: token.refreshOn, scopes: token.scopes, account: account, tenantId: token.realm,
            tokenType: token.tokenType, isFromCache: isFromCache
        )
    }

    /// A summary for logs: the token type, scopes, expiry and source; never the token.
    public var description: String {
        "\(tokenType) token for \(scopes) expiring at \(expiresOn) (\(isFromCache ? "from the cache" : "from the authority"))"
    }
}

extension AuthenticationResult: CustomReflectable {
    /// Everything but the token, so `dump(result)` and debuggers do not show it.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "expiresOn": expiresOn, "extendedExpiresOn": extendedExpiresOn as Any, "refreshOn": refreshOn as Any,
                "scopes": scopes, "account": account.homeAccountId, "tenantId": tenantId, "tokenType": tokenType,
                "isFromCache": isFromCache,
            ],
            displayStyle: .struct
        )
    }
}
