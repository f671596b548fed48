public import SecureTokenCache

/// A synthetic MSAL cache of a given size, shaped like real ones: users with a few access
/// tokens each across two clients, one refresh token, id token and account each.
///
/// The benchmarks and PeerCompare use it, and PeerCompare hands the same JSON to msal-python,
/// so every side of a comparison reads the same cache.
public struct Workload: Sendable {
    /// A client in the FOCI family with a token for every user (the probe client).
    public static let clientA = "11111111-aaaa-4bbb-8ccc-000000000001"
    /// The family's other client.
    public static let clientB = "22222222-aaaa-4bbb-8ccc-000000000002"
    /// A client in no family that signs in with one user of its own.
    public static let soloClient = "33333333-aaaa-4bbb-8ccc-000000000003"
    /// Every user's home tenant.
    public static let tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"
    /// The tenant's authority, as lookups name it.
    public static let authority = try! Authority("https://login.microsoftonline.com/\(tenant)")
    /// Access tokens per user (alternating between client A and B).
    public static let tokensPerUser = 4
    /// Cached access tokens at which size-dependent paths are measured.
    public static let sizes = [10, 1_000, 100_000]
    /// The scopes of a hit for client A (user tokens 0 and 2 are client A's).
    public static let hitScopes: Scopes = ["Scope0.Read"]
    /// Scopes no token was granted.
    public static let missScopes: Scopes = ["Never.Granted"]

    /// How many access tokens the cache holds.
    public let accessTokens: Int
    /// The cache as MSAL JSON (msal-python's layout).
    public let json: [UInt8]

    /// How many users the cache holds.
    public var users: Int { Self.users(accessTokens: accessTokens) }

    /// How many users a cache of `accessTokens` holds.
    public static func users(accessTokens: Int) -> Int { max(1, accessTokens / tokensPerUser) }

    /// The middle user of a cache of `accessTokens`: a hit that is not the first or last entry.
    public static func probeUser(accessTokens: Int) -> Int { users(accessTokens: accessTokens) / 2 }

    /// Builds the cache of `accessTokens` access tokens.
    public init(accessTokens: Int) {
        self.accessTokens = accessTokens
        let users = max(1, accessTokens / Self.tokensPerUser)
        var at: [String] = []
        var rt: [String] = []
        var idt: [String] = []
        var accounts: [String] = []
        let far = 4_000_000_000
        for user in 0..<users {
            let digits = String(user)
            let uid = "00000000-0000-0000-0000-" + String(repeating: "0", count: 12 - digits.count) + digits
            let hid = "\(uid).\(Self.tenant)"
            for token in 0..<Self.tokensPerUser where user * Self.tokensPerUser + token < accessTokens {
                let client = token % 2 == 0 ? Self.clientA : Self.clientB
                let target = "Scope\(token).Read openid profile"
                at.append(
                    #""\#(hid)-login.microsoftonline.com-accesstoken-\#(client)-\#(Self.tenant)-\#(target.lowercased())": {"credential_type": "AccessToken", "secret": "at-\#(user)-\#(token)", "home_account_id": "\#(hid)", "environment": "login.microsoftonline.com", "client_id": "\#(client)", "target": "\#(target)", "realm": "\#(Self.tenant)", "token_type": "Bearer", "cached_at": "1700000000", "expires_on": "\#(far)", "extended_expires_on": "\#(far)"}"#
                )
            }
            rt.append(
                #""\#(hid)-login.microsoftonline.com-refreshtoken-\#(Self.clientA)--": {"credential_type": "RefreshToken", "secret": "rt-\#(user)", "home_account_id": "\#(hid)", "environment": "login.microsoftonline.com", "client_id": "\#(Self.clientA)", "family_id": "1", "last_modification_time": "1700000000"}"#
            )
            idt.append(
                #""\#(hid)-login.microsoftonline.com-idtoken-\#(Self.clientA)-\#(Self.tenant)-": {"credential_type": "IdToken", "secret": "e30.e30.", "home_account_id": "\#(hid)", "environment": "login.microsoftonline.com", "realm": "\#(Self.tenant)", "client_id": "\#(Self.clientA)"}"#
            )
            accounts.append(
                #""\#(hid)-login.microsoftonline.com-\#(Self.tenant)": {"home_account_id": "\#(hid)", "environment": "login.microsoftonline.com", "realm": "\#(Self.tenant)", "local_account_id": "\#(uid)", "username": "user\#(user)@contoso.com", "authority_type": "MSSTS"}"#
            )
        }
        let metadata =
            #""appmetadata-login.microsoftonline.com-\#(Self.clientA)": {"client_id": "\#(Self.clientA)", "environment": "login.microsoftonline.com", "family_id": "1"}, "appmetadata-login.microsoftonline.com-\#(Self.clientB)": {"client_id": "\#(Self.clientB)", "environment": "login.microsoftonline.com", "family_id": "1"}"#
        let text =
            "{\"AccessToken\": {\(at.joined(separator: ", "))}, \"Account\": {\(accounts.joined(separator: ", "))}, \"IdToken\": {\(idt.joined(separator: ", "))}, \"RefreshToken\": {\(rt.joined(separator: ", "))}, \"AppMetadata\": {\(metadata)}}"
        json = Array(text.utf8)
    }

    /// Imports the workload into `group` and returns client A's cache over it.
    public func open(_ group: CacheGroup = CacheGroup(inMemory: "bench")) throws -> (CacheGroup, TokenCache) {
        try group.importMSAL(json)
        return (group, try TokenCache(clientId: Self.clientA, group: group))
    }

    /// The middle user's account: a hit that is not the first or last entry.
    public func probeAccount(_ cache: TokenCache) throws -> Account {
        try cache.account(username: probeUsername)!
    }

    /// The middle user's index and username.
    public var probeUser: Int { Self.probeUser(accessTokens: accessTokens) }
    /// The probe user's username.
    public var probeUsername: String { "user\(probeUser)@contoso.com" }

    /// A cache for `clientId` that signed in with one new user (not in any family).
    public func signIn(clientId: String, group: CacheGroup) throws -> TokenCache {
        let cache = try TokenCache(clientId: clientId, group: group)
        let claims =
            #"{"oid":"99999999-0000-0000-0000-000000000000","preferred_username":"solo@contoso.com","sub":"s","tid":"\#(Self.tenant)"}"#
        let info = #"{"uid":"99999999-0000-0000-0000-000000000000","utid":"\#(Self.tenant)"}"#
        let response =
            #"{"token_type":"Bearer","access_token":"at-solo","refresh_token":"rt-solo","expires_in":3600,"scope":"Solo.Read","id_token":"e30.\#(base64url(claims)).","client_info":"\#(base64url(info))"}"#
        let request = TokenRequest(
            clientId: clientId, authority: Self.authority, scopes: ["Solo.Read"], grantType: "authorization_code")
        try cache.store(try TokenResponse(json: Array(response.utf8)), for: request)
        return cache
    }
}

extension Workload {
    /// A token response for workload user `user` and client A, as the token endpoint would
    /// send it on a silent refresh numbered `serial`: a new access token for `scope`, a rotated
    /// family refresh token and a newly issued id token (its `iat` differs), so responses of
    /// different serials change three entries, as the real endpoint's do; the account stays the
    /// same. Storing it for an account the workload already holds changes no sizes.
    public static func response(user: Int, scope: String = "Scope0.Read", serial: Int = 0) throws -> TokenResponse {
        let digits = String(user)
        let uid = "00000000-0000-0000-0000-" + String(repeating: "0", count: 12 - digits.count) + digits
        let claims =
            #"{"oid":"\#(uid)","preferred_username":"user\#(user)@contoso.com","sub":"s\#(user)","tid":"\#(tenant)","iat":\#(1_700_000_000 + serial)}"#
        let info = #"{"uid":"\#(uid)","utid":"\#(tenant)"}"#
        let text =
            #"{"token_type":"Bearer","access_token":"at-\#(user)-new-\#(serial)","refresh_token":"rt-\#(user)-new-\#(serial)","expires_in":3600,"ext_expires_in":3600,"scope":"\#(scope) openid profile","foci":"1","id_token":"e30.\#(base64url(claims)).","client_info":"\#(base64url(info))"}"#
        return try TokenResponse(json: Array(text.utf8))
    }

    /// Two refreshes of `user` (serials 0 and 1), for write loops to alternate: storing what
    /// is cached already commits nothing, so a loop that stored one response over and over
    /// would measure no write.
    public static func alternatingRefreshes(user: Int) throws -> [TokenResponse] {
        [try response(user: user, serial: 0), try response(user: user, serial: 1)]
    }

    /// The request `response(user:scope:)` answers.
    public static func request(scope: String = "Scope0.Read") -> TokenRequest {
        TokenRequest(clientId: clientA, authority: authority, scopes: Scopes([scope]), grantType: "refresh_token")
    }
}

/// Base64url without padding.
func base64url(_ text: String) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    var output = ""
    var buffer: UInt32 = 0
    var bits = 0
    for byte in text.utf8 {
        buffer = buffer << 8 | UInt32(byte)
        bits += 8
        while bits >= 6 {
            bits -= 6
            output.append(alphabet[Int((buffer >> UInt32(bits)) & 0x3F)])
        }
    }
    if bits > 0 { output.append(alphabet[Int((buffer << UInt32(6 - bits)) & 0x3F)]) }
    return output
}
