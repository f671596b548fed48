import Glibc

/// Reads an ADAL for Python token cache (Azure CLI's old `~/.azure/accessTokens.json`) and
/// turns it into entries of the unified model.
///
/// The format is what adal 1.2.7's `TokenCache.serialize()` writes: `json.dumps` of a list of
/// flat objects with `_clientId`, `_authority`, `userId`, `resource`, `tokenType`,
/// `accessToken`, `refreshToken`, `expiresIn`, `expiresOn` (the *local* naive time of the
/// writing machine, `str(datetime)`: `"2019-01-01 10:00:00.123456"`), `isMRRT` and the
/// id-token fields `oid`, `tenantId`, `givenName`, `familyName`, `isUserIdDisplayable`,
/// `identityProvider`.
///
/// ## Legacy-only accounts
///
/// ADAL never learns the user's home account id (`client_info` is a v2 answer), and MSAL's
/// SDKs treat such users as "legacy" accounts until the first refresh. Here a legacy account
/// is an ordinary `Account` entry (and refresh and access tokens) filed under a *synthetic*
/// home account id, `adal-legacy-<hex of "<cloud>/<lower-cased UPN>">.<tenant>`, in the entry's
/// environment (`<cloud>` is the first host of the environment's alias group, so
/// `login.windows.net` and `login.microsoftonline.com` name one user):
///
/// - the cloud and the user name (case-insensitive) key it, so different users never share
///   tokens, and ``TokenCache/account(username:)`` finds it like any other account;
/// - the part after the dot is the tenant (the id token's `tid`, ADAL's `tenantId`, else the
///   authority's tenant), so the account's "home authority" is where its refresh token is
///   redeemed. An entry without `tenantId` whose authority names its tenant by domain
///   (`contoso.onmicrosoft.com`) gets a home authority of the domain's last label: pass the
///   authority explicitly to redeem such an account (ADAL always stored `tenantId` for
///   user tokens, so real caches do not hit this);
/// - ``Account/isLegacy`` tells it apart; the first silent acquisition with it redeems the
///   legacy refresh token, files the answer under the real home account id from
///   `client_info`, and deletes that client's legacy entries (the account entry too once no
///   client has legacy tokens for it left).
enum ADALCache {
    /// The prefix of a synthetic legacy home account id's object-id part.
    static let legacyPrefix = "adal-legacy-"

    /// The synthetic home account id of a legacy user (see the type's doc).
    static func legacyHomeAccountId(environment: Environment, username: String, tenant: String) -> HomeAccountId {
        // Hex keeps the user name's dots and dashes out of the `<uid>.<utid>` split.
        let digits = Array("0123456789abcdef")
        let hex = String(
            (environment.group + "/" + username.lowercased()).utf8.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xf)]] })
        return HomeAccountId(uid: legacyPrefix + hex, utid: tenant.lowercased())
    }

    /// Parses an ADAL cache and returns the unified entries it migrates to, in file order.
    /// Access tokens expired at `now` are left out; app-only entries (no `userId`, no refresh
    /// token: client-credential tokens, which a public client never uses) are skipped.
    ///
    /// Throws `.malformedCache` naming the entry index (never a value) when the document is not
    /// a JSON list of objects, an entry lacks `_clientId` or `_authority`, an entry with a
    /// refresh token lacks `userId`, an access token lacks `resource` or a readable
    /// `expiresOn`, or a field has the wrong type.
    static func migrate(_ bytes: some Collection<UInt8>, now: Int64) throws -> [CacheEntry] {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch let error as TokenCacheError {
            throw TokenCacheError(.malformedCache, "the ADAL cache is not valid JSON (\(error.message)); nothing was imported")
        }
        guard case .array(let items) = value else {
            throw TokenCacheError(.malformedCache, "an ADAL cache must be a JSON list of entries; nothing was imported")
        }
        var result: [CacheEntry] = []
        for (position, item) in items.enumerated() {
            guard case .object(let fields) = item else {
                throw failure(position, "is not a JSON object")
            }
            result += try migrate(entry: fields, position: position, now: now)
        }
        return result
    }

    private static func failure(_ position: Int, _ what: String) -> TokenCacheError {
        TokenCacheError(.malformedCache, "ADAL cache entry \(position) \(what); nothing was imported")
    }

    /// A string member; throws when present with another type, or missing when `required`.
    private static func string(_ fields: JSONObject, _ name: String, _ position: Int, required: Bool = false) throws -> String? {
        guard let value = fields[name], value != .null else {
            if required { throw failure(position, "has no \(name)") }
            return nil
        }
        guard case .string(let text) = value else { throw failure(position, "has a \(name) that is not a string") }
        if required, text.isEmpty { throw failure(position, "has an empty \(name)") }
        return text
    }

    private static func migrate(entry fields: JSONObject, position: Int, now: Int64) throws -> [CacheEntry] {
        let clientId = try string(fields, "_clientId", position, required: true)!
        let authorityURL = try string(fields, "_authority", position, required: true)!
        guard let authority = try? Authority(authorityURL) else {
            throw failure(position, "has an _authority that is not an https://host/tenant URL")
        }
        let refreshSecret = try string(fields, "refreshToken", position).flatMap { $0.isEmpty ? nil : $0 }
        let accessSecret = try string(fields, "accessToken", position).flatMap { $0.isEmpty ? nil : $0 }
        let tenantId = try string(fields, "tenantId", position)
        guard let userId = try string(fields, "userId", position, required: refreshSecret != nil), !userId.isEmpty else {
            return []
        }

        let environment = authority.environment.host
        // Rule 3: the realm is the id token's tid (ADAL's tenantId); a /common authority says
        // nothing about the tenant, and a domain is only an alias of it.
        let realm = tenantId.flatMap { $0.isEmpty ? nil : $0 } ?? authority.tenant
        let homeAccountId = legacyHomeAccountId(environment: authority.environment, username: userId, tenant: realm).rawValue
        let stamp = String(now)
        var entries: [CacheEntry] = []

        if let accessSecret {
            let resource = try string(fields, "resource", position, required: true)!
            let expiresText = try string(fields, "expiresOn", position, required: true)!
            guard let expiresOn = parseLocalTime(expiresText) else {
                throw failure(position, "has an expiresOn that is not a local time such as 2019-01-01 10:00:00.123456")
            }
            if expiresOn > now {
                entries.append(
                    .accessToken(
                        AccessToken(fields: [
                            "credential_type": .string("AccessToken"),
                            "secret": .string(accessSecret),
                            "home_account_id": .string(homeAccountId),
                            "environment": .string(environment),
                            "client_id": .string(clientId),
                            "target": .string(Scopes(resource: resource).target),
                            "realm": .string(realm),
                            "token_type": .string(try string(fields, "tokenType", position) ?? "Bearer"),
                            "cached_at": .string(stamp),
                            "expires_on": .string(String(expiresOn)),
                            "extended_expires_on": .string(String(expiresOn)),
                        ])))
            }
        }
        if let refreshSecret {
            entries.append(
                .refreshToken(
                    RefreshToken(fields: [
                        "credential_type": .string("RefreshToken"),
                        "secret": .string(refreshSecret),
                        "home_account_id": .string(homeAccountId),
                        "environment": .string(environment),
                        "client_id": .string(clientId),
                        "last_modification_time": .string(stamp),
                    ])))
        }
        if !entries.isEmpty {
            var account: JSONObject = [
                "home_account_id": .string(homeAccountId),
                "environment": .string(environment),
                "realm": .string(realm),
                "local_account_id": .string(try string(fields, "oid", position) ?? ""),
                "username": .string(userId),
                // MSSTS (not ADAL's "AAD"): msal-python lists only MSSTS and ADFS accounts, and
                // an exported migrated account must stay usable there.
                "authority_type": .string("MSSTS"),
            ]
            let name = [try string(fields, "givenName", position), try string(fields, "familyName", position)]
                .compactMap { $0 }.joined(separator: " ")
            if !name.isEmpty { account["name"] = .string(name) }
            entries.append(.account(Account(fields: account)))
        }
        return entries
    }

    /// Seconds since the epoch of ADAL's `str(datetime.now() + timedelta)`: a naive local time
    /// `YYYY-MM-DD HH:MM:SS[.ffffff]` (a `T` separator is accepted too), read in this
    /// machine's time zone as ADAL wrote it in the writer's.
    static func parseLocalTime(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 19, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: " ") || bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"),
            bytes[16] == UInt8(ascii: ":")
        else { return nil }
        func number(_ range: Range<Int>) -> Int32? {
            var value: Int32 = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int32(byte - UInt8(ascii: "0"))
            }
            return value
        }
        if bytes.count > 19 {
            // The fraction does not count (expiry is in whole seconds), so only its digits are
            // checked: read as a number, a long one would overflow.
            guard bytes[19] == UInt8(ascii: "."), bytes.count > 20,
                bytes[20...].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
            else { return nil }
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19), (1...12).contains(month), (1...31).contains(day),
            hour < 24, minute < 60, second < 61
        else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        parts.tm_isdst = -1
        let seconds = mktime(&parts)
        guard seconds != -1 || (year == 1969 || year == 1970) else { return nil }
        return Int64(seconds)
    }
}
