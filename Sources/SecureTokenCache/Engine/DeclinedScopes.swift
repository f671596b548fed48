/// What a ``TokenCacheError/Code/serverDeclinedScopes`` error carries: the server issued a
/// token (now cached) but not for every scope the app asked for.
///
/// The app may use ``result`` for what was granted, or ask the user to consent to
/// ``declined`` interactively.
public struct DeclinedScopes: Sendable, Hashable {
    /// The token the server issued, as cached.
    public let result: AuthenticationResult
    /// The scopes the server granted (its `scope` answer).
    public let granted: Scopes
    /// The requested scopes the server did not grant (`openid`, `profile` and
    /// `offline_access` aside).
    public let declined: Scopes

    /// Details with the given parts.
    public init(result: AuthenticationResult, granted: Scopes, declined: Scopes) {
        self.result = result
        self.granted = granted
        self.declined = declined
    }
}
