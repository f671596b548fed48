/// A token request as the app made it: who asked, where, for what.
public struct TokenRequest: Sendable, Hashable {
    /// The client (application) id.
    public var clientId: String
    /// The authority the request went to.
    public var authority: Authority
    /// The scopes requested.
    public var scopes: Scopes
    /// The OAuth grant type (`authorization_code`, `refresh_token`, `urn:ietf:params:oauth:grant-type:device_code`, ...).
    public var grantType: String?
    /// The key a PoP or SSH-certificate token is bound to.
    public var keyId: String?
    /// Extra request parameters that set the token apart in the cache, such as msal-python's
    /// `fmi_path`: the token is stored under their extended cache key (`ext_cache_key`, as
    /// msal-python and the Go SDK compute it) and answers only requests with the same ones.
    public var cacheKeyComponents: [String: String]

    /// A request with the given parts.
    public init(
        clientId: String, authority: Authority, scopes: Scopes, grantType: String? = nil, keyId: String? = nil,
        cacheKeyComponents: [String: String] = [:]
    ) {
        self.clientId = clientId
        self.authority = authority
        self.scopes = scopes
        self.grantType = grantType
        self.keyId = keyId
        self.cacheKeyComponents = cacheKeyComponents
    }

    /// The extended cache key of ``cacheKeyComponents``, `nil` when there are none.
    var extCacheKey: String? { ExtendedCacheKey.of(cacheKeyComponents) }
}

/// Turns a token response and its request into cache entries, as `cache-model.md` says.
///
/// Entries are built with msal-python's member order, so an export of them is what
/// msal-python would have written; the differences are our rules (realm from the id token's
/// `tid`; an access token replaces tokens with intersecting scopes; one refresh token per
/// account and client).
struct Ingest {
    /// The grant types that establish an account (msal-python records them as `account_source`).
    static let accountEstablishingGrants: Set<String> = [
        "authorization_code", "password", "device_code", "urn:ietf:params:oauth:grant-type:device_code", "broker", "user_fic",
    ]

    let request: TokenRequest
    let response: TokenResponse
    let now: Int64
    let homeAccountId: String?
    let realm: String
    let environment: String
    /// How an on-behalf-of response is filed, `nil` for any other response.
    let onBehalfOf: OnBehalfOfFiling?

    /// How an on-behalf-of response is filed: what its tokens carry as `user_assertion_hash`, and
    /// whether its refresh token is kept.
    enum OnBehalfOfFiling {
        /// Under the assertion's hash, without the refresh token: as in MSAL.NET, only the holder
        /// of the same assertion finds the access token, and a new assertion is redeemed afresh.
        case assertion(UserAssertion)
        /// Under a long-running session's key, with the refresh token, which renews the
        /// session's tokens after the assertion has expired (MSAL.NET's long-running OBO).
        case session(String)

        /// What the tokens carry as `user_assertion_hash`.
        var key: String {
            switch self {
            case .assertion(let assertion): assertion.hash
            case .session(let key): key
            }
        }
    }

    /// The entries of `response` to `request`; of an on-behalf-of request when `onBehalfOf` is
    /// given.
    init(response: TokenResponse, request: TokenRequest, now: Int64, onBehalfOf: OnBehalfOfFiling? = nil) throws {
        guard !request.clientId.isEmpty else { throw TokenCacheError(.invalidArgument, "the request has an empty client id") }
        self.request = request
        self.response = response
        self.now = now
        self.onBehalfOf = onBehalfOf
        self.environment = request.authority.environment.host
        let claims = response.idTokenClaims
        if let info = response.clientInfo, let uid = info.string("uid"), let utid = info.string("utid") {
            homeAccountId = "\(uid).\(utid)"
        } else if let sub = claims.string("sub") {
            // ADFS without client_info: the id token's subject identifies the user.
            homeAccountId = sub
        } else {
            homeAccountId = nil  // app-only token
        }
        realm = claims.string("tid") ?? request.authority.tenant
    }

    private var homeAccountValue: JSONValue { homeAccountId.map(JSONValue.string) ?? .null }

    /// The granted scopes, sorted as msal-python sorts them.
    var target: String { (response.grantedScopes ?? request.scopes).target }

    var accessToken: AccessToken {
        let expiresIn = response.expiresIn ?? response.expiresOn.map { $0 - now } ?? 600
        let extendedExpiresIn = response.extendedExpiresIn ?? expiresIn
        var fields: JSONObject = [
            "credential_type": .string("AccessToken"),
            "secret": .string(response.accessToken),
            "home_account_id": homeAccountValue,
            "environment": .string(environment),
            "client_id": .string(request.clientId),
            "target": .string(target),
            "realm": .string(realm),
            "token_type": .string(response.tokenType),
            "cached_at": .string(String(now)),
            "expires_on": .string(String(now + expiresIn)),
            "extended_expires_on": .string(String(now + extendedExpiresIn)),
        ]
        if let keyId = request.keyId { fields["key_id"] = .string(keyId) }
        if let extCacheKey = request.extCacheKey { fields["ext_cache_key"] = .string(extCacheKey) }
        if let refreshIn = response.refreshIn { fields["refresh_on"] = .string(String(now + refreshIn)) }
        if let onBehalfOf { fields["user_assertion_hash"] = .string(onBehalfOf.key) }
        return AccessToken(fields: fields)
    }

    var account: Account? {
        guard let homeAccountId, response.clientInfo != nil || !response.idTokenClaims.keys.isEmpty else { return nil }
        let claims = response.idTokenClaims
        var fields: JSONObject = [
            "home_account_id": .string(homeAccountId),
            "environment": .string(environment),
            "realm": .string(realm),
            "local_account_id": claims.string("oid").map(JSONValue.string) ?? claims.string("sub").map(JSONValue.string) ?? .null,
            "username": .string(claims.string("preferred_username") ?? claims.string("upn") ?? ""),
            "authority_type": .string(realm == "adfs" ? "ADFS" : "MSSTS"),
        ]
        if let grant = request.grantType, Self.accountEstablishingGrants.contains(grant) {
            fields["account_source"] = .string(grant)
        }
        return Account(fields: fields)
    }

    var idToken: IdToken? {
        guard let raw = response.idToken else { return nil }
        return IdToken(fields: [
            "credential_type": .string("IdToken"),
            "secret": .string(raw),
            "home_account_id": homeAccountValue,
            "environment": .string(environment),
            "realm": .string(realm),
            "client_id": .string(request.clientId),
        ])
    }

    var refreshToken: RefreshToken? {
        guard let secret = response.refreshToken else { return nil }
        if case .assertion = onBehalfOf { return nil }
        var fields: JSONObject = [
            "credential_type": .string("RefreshToken"),
            "secret": .string(secret),
            "home_account_id": homeAccountValue,
            "environment": .string(environment),
            "client_id": .string(request.clientId),
            "target": .string(target),
            "last_modification_time": .string(String(now)),
        ]
        if case .session(let key) = onBehalfOf {
            // A session's token redeems only for the session: filed under its key, in no family.
            fields["user_assertion_hash"] = .string(key)
        } else if let family = response.familyId {
            fields["family_id"] = .string(family)
        }
        return RefreshToken(fields: fields)
    }

    /// Files the response's entries into `transaction`.
    ///
    /// - Parameters:
    ///   - redeemed: the refresh token this response was obtained with, if any; a rotated
    ///     refresh token replaces it in place (so a family token shared by several clients
    ///     stays one entry).
    ///   - signIn: whether this response is an interactive sign-in of the client, which marks
    ///     the account signed in and current for it.
    /// - Returns: the access token as stored.
    @discardableResult
    func apply(to transaction: inout IndexTransaction, redeemed: EntryID? = nil, signIn: Bool) -> AccessToken {
        let client = request.clientId.lowercased()
        let account = homeAccountId?.lowercased() ?? ""
        let authorityEnvironment = request.authority.environment

        // Access token: replaces tokens with intersecting scopes in its bucket (rule 4); one
        // with exactly the same scopes is updated in place (keeping another SDK's key).
        let token = accessToken
        let bucket = AccessTokenBucket(
            account: token.assertionKey ?? HashedString(account), environment: authorityEnvironment.groupKey,
            realm: HashedString(realm.lowercased()), client: HashedString(client),
            tokenType: HashedString(token.tokenType.lowercased()), extCacheKey: token.bucket.extCacheKey
        )
        let replaced = transaction.index.accessTokens(
            in: bucket, intersecting: token.scopes, onBehalfOf: token.assertionKey != nil)
        let sameScopes = replaced.first {
            if case .accessToken(let old) = $0.entry { return old.scopes == token.scopes } else { return false }
        }
        for stored in replaced where stored.id != sameScopes?.id { transaction.delete(stored.id) }
        if let sameScopes {
            // Keep the fields another SDK stored (rule 1).
            transaction.replace(sameScopes.id, with: CacheEntry.accessToken(token).keepingUnknownFields(of: sameScopes.entry))
        } else {
            transaction.put(.accessToken(token))
        }

        if let newAccount = self.account {
            let existing = transaction.index.accountEntries(account).first {
                guard case .account(let old) = $0.entry else { return false }
                return old.environment.isAlias(of: authorityEnvironment) && old.realm.lowercased() == realm.lowercased()
            }
            if let existing {
                // A response without an id token (an ssh-cert, or a refresh answered with
                // client_info only) knows no username or object id: writing its account would
                // blank the stored `username` and `local_account_id`. Keep the account then, and
                // keep unknown fields otherwise.
                if response.idToken != nil {
                    transaction.replace(
                        existing.id, with: CacheEntry.account(newAccount).keepingUnknownFields(of: existing.entry))
                }
            } else {
                transaction.put(.account(newAccount))
            }
        }

        if let newIdToken = idToken {
            let existing = transaction.index.credentials(account: account, client: client).first {
                guard case .idToken(let old) = $0.entry else { return false }
                return old.environment.isAlias(of: authorityEnvironment) && old.realm.lowercased() == realm.lowercased()
            }
            if let existing {
                transaction.replace(existing.id, with: CacheEntry.idToken(newIdToken).keepingUnknownFields(of: existing.entry))
            } else {
                transaction.put(.idToken(newIdToken))
            }
        }

        if let newRefreshToken = refreshToken {
            storeRefreshToken(newRefreshToken, redeemed: redeemed, into: &transaction)
        }

        // App metadata: created once per client and cloud; family_id follows the server's `foci`.
        if let existing = transaction.index.appMetadata(client: client, environment: authorityEnvironment) {
            if let family = response.familyId, case .appMetadata(let old) = existing.entry, old.familyId != family {
                var fields = old.fields
                fields["family_id"] = .string(family)
                transaction.replace(existing.id, with: .appMetadata(AppMetadata(fields: fields)))
            }
        } else {
            var fields: JSONObject = ["client_id": .string(request.clientId), "environment": .string(environment)]
            if let family = response.familyId { fields["family_id"] = .string(family) }
            transaction.put(.appMetadata(AppMetadata(fields: fields)))
        }

        // A tenant named by domain (contoso.onmicrosoft.com) is stored under its tenant id: remember
        // the pair so the next lookup through the same authority finds the token.
        let requestedTenant = request.authority.tenant
        if !request.authority.isMultiTenant, requestedTenant != realm.lowercased() {
            transaction.setTenantAlias(requestedTenant, tenantId: realm.lowercased())
        }

        if signIn, !account.isEmpty {
            transaction.updateClientState(client) { $0.signIn(account) }
        }
        return token
    }

    private func storeRefreshToken(_ token: RefreshToken, redeemed: EntryID?, into transaction: inout IndexTransaction) {
        let client = request.clientId.lowercased()
        let account = homeAccountId?.lowercased() ?? ""
        if let redeemed, let stored = transaction.index[redeemed], case .refreshToken(let old) = stored.entry {
            let sameOwner = old.clientId.lowercased() == client
            let sameFamily = old.familyId != nil && old.familyId == response.familyId
            if sameOwner || sameFamily {
                // A rotated token replaces the one redeemed, under its key and owner.
                var fields = old.fields
                fields["secret"] = .string(token.secret)
                fields["last_modification_time"] = .string(String(now))
                if let family = response.familyId { fields["family_id"] = .string(family) }
                transaction.replace(redeemed, with: .refreshToken(RefreshToken(fields: fields)))
                return
            }
        }
        // One refresh token per account (or session), cloud and client: the newest replaces the
        // others.
        let existing =
            (token.assertionKey.map {
                transaction.index.onBehalfOfRefreshTokens(session: $0, environment: request.authority.environment, client: client)
            }
            ?? transaction.index.ownRefreshTokens(account: account, environment: request.authority.environment, client: client))
            .sorted { $0.ordinal < $1.ordinal }
        if let first = existing.first {
            for stored in existing.dropFirst() { transaction.delete(stored.id) }
            transaction.replace(first.id, with: CacheEntry.refreshToken(token).keepingUnknownFields(of: first.entry))
        } else {
            transaction.put(.refreshToken(token))
        }
    }
}
