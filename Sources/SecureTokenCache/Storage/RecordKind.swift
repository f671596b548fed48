/// The kind of a stored record. The raw value is part of every record's associated data, so a
/// record cannot be moved to another kind unnoticed; never renumber.
enum RecordKind: UInt8, Sendable, Hashable, CaseIterable {
    case accessToken = 1
    case refreshToken = 2
    case idToken = 3
    case account = 4
    case appMetadata = 5
    /// The order of the MSAL JSON sections (for byte-exact export).
    case layout = 6
    /// A top-level MSAL JSON section this engine does not know, kept verbatim.
    case unknownSection = 7
    /// Per-client sign-in state: the current and previous account, and, while the client has
    /// few accounts, every account signed in and out (else each has a ``signInState`` record).
    case clientState = 8
    /// A tenant named by domain in a request (`contoso.onmicrosoft.com`) and the tenant id
    /// (`tid`) its tokens were stored under.
    case tenantAlias = 9
    /// Where one account stands with one client: signed in or signed out (``ClientState``),
    /// named by the client and the account (``RecordCodec/signInRecordID(client:account:)``).
    case signInState = 10
}
