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
        target = (response.grantedScopes ?? request.scopes).target
        shared = SharedParts(
            homeAccount: homeAccountId.flatMap { $0.isEmpty ? nil : HomeAccountId($0) }, scopes: Scopes(target: target),
            realm: HashedString(realm.asciiLowercased), client: HashedString(request.clientId.asciiLowercased))
    }

    /// What every entry of the response reads from the same members, parsed once for all of
    /// them (as an entry read from its members would parse it).
    private struct SharedParts {
        /// `home_account_id` as a credential reads it (`nil` for none or an empty one).
        let homeAccount: HomeAccountId?
        /// `target` as an access token reads it.
        let scopes: Scopes
        /// `realm`, lower-cased, with its hash.
        let realm: HashedString
        /// `client_id`, lower-cased, with its hash.
        let client: HashedString
    }

    private let shared: SharedParts

    private var homeAccountValue: JSONValue { homeAccountId.map(JSONValue.string) ?? .null }

    /// The granted scopes, sorted as msal-python sorts them.
    let target: String

    /// An entry's members in msal-python's order, picked out for the entry as they are added.
    private struct Fields {
        var members: [(key: String, value: JSONValue)] = []
        /// Each member's ``KnownField`` code (0: stored by name).
        var codes: [UInt8] = []
        var parts = EntryParts()

        /// No members yet, with the parts the response's entries share.
        init(capacity: Int, shared: SharedParts, environment: Environment) {
            members.reserveCapacity(capacity)
            codes.reserveCapacity(capacity)
            parts = EntryParts(capacity: capacity)
            parts.homeAccount = .some(shared.homeAccount)
            parts.cloud = environment
            parts.setLowercasedKey(shared.realm, for: .realm)
            parts.setLowercasedKey(shared.client, for: .clientId)
        }

        /// Appends a known member (not there yet).
        mutating func append(_ field: KnownField, _ value: JSONValue) {
            members.append((key: field.name, value: value))
            codes.append(field.rawValue)
            parts[field] = value
        }

        /// Appends an on-behalf-of token's assertion hash (or session key).
        mutating func appendAssertionHash(_ hash: String) {
            members.append((key: "user_assertion_hash", value: .string(hash)))
            codes.append(0)
            parts.assertionHash = hash
        }

        /// The entry of these members, held as the payload a record of it stores (its ordinal
        /// is set when it is filed).
        func entry<Model: EntryModel>(_: Model.Type) -> Model {
            Model(members: .payload(EntryPayload.encode(ordinal: 0, members: members, codes: codes)[...]), parts: parts)
        }
    }

    private func fields(capacity: Int) -> Fields {
        Fields(capacity: capacity, shared: shared, environment: request.authority.environment)
    }

    var accessToken: AccessToken {
        let expiresIn = response.expiresIn ?? response.expiresOn.map { $0 - now } ?? 600
        let extendedExpiresIn = response.extendedExpiresIn ?? expiresIn
        var fields = fields(capacity: 15)
        fields.parts.scopes = shared.scopes
        fields.append(.credentialType, .string("AccessToken"))
        fields.append(.secret, .string(response.accessToken))
        fields.append(.homeAccountId, homeAccountValue)
        fields.append(.environment, .string(environment))
        fields.append(.clientId, .string(request.clientId))
        fields.append(.target, .string(target))
        fields.append(.realm, .string(realm))
        fields.append(.tokenType, .string(response.tokenType))
        fields.append(.cachedAt, .string(String(now)))
        fields.append(.expiresOn, .string(String(now + expiresIn)))
        fields.append(.extendedExpiresOn, .string(String(now + extendedExpiresIn)))
        if let keyId = request.keyId { fields.append(.keyId, .string(keyId)) }
        if let extCacheKey = request.extCacheKey { fields.append(.extCacheKey, .string(extCacheKey)) }
        if let refreshIn = response.refreshIn { fields.append(.refreshOn, .string(String(now + refreshIn))) }
        if let onBehalfOf { fields.appendAssertionHash(onBehalfOf.key) }
        return fields.entry(AccessToken.self)
    }

    var account: Account? {
        guard let homeAccountId, response.clientInfo != nil || !response.idTokenClaims.keys.isEmpty else { return nil }
        let claims = response.idTokenClaims
        var fields = fields(capacity: 7)
        fields.append(.homeAccountId, .string(homeAccountId))
        fields.append(.environment, .string(environment))
        fields.append(.realm, .string(realm))
        fields.append(
            .localAccountId,
            claims.string("oid").map(JSONValue.string) ?? claims.string("sub").map(JSONValue.string) ?? .null)
        fields.append(.username, .string(claims.string("preferred_username") ?? claims.string("upn") ?? ""))
        fields.append(.authorityType, .string(realm == "adfs" ? "ADFS" : "MSSTS"))
        if let grant = request.grantType, Self.accountEstablishingGrants.contains(grant) {
            fields.append(.accountSource, .string(grant))
        }
        return fields.entry(Account.self)
    }

    var idToken: IdToken? {
        guard let raw = response.idToken else { return nil }
        var fields = fields(capacity: 6)
        fields.append(.credentialType, .string("IdToken"))
        fields.append(.secret, .string(raw))
        fields.append(.homeAccountId, homeAccountValue)
        fields.append(.environment, .string(environment))
        fields.append(.realm, .string(realm))
        fields.append(.clientId, .string(request.clientId))
        return fields.entry(IdToken.self)
    }

    var refreshToken: RefreshToken? {
        guard let secret = response.refreshToken else { return nil }
        if case .assertion = onBehalfOf { return nil }
        var fields = fields(capacity: 8)
        fields.append(.credentialType, .string("RefreshToken"))
        fields.append(.secret, .string(secret))
        fields.append(.homeAccountId, homeAccountValue)
        fields.append(.environment, .string(environment))
        fields.append(.clientId, .string(request.clientId))
        fields.append(.target, .string(target))
        fields.append(.lastModificationTime, .string(String(now)))
        if case .session(let key) = onBehalfOf {
            // A session's token redeems only for the session: filed under its key, in no family.
            fields.appendAssertionHash(key)
        } else if let family = response.familyId {
            fields.append(.familyId, .string(family))
        }
        return fields.entry(RefreshToken.self)
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
        let client = shared.client.value
        let account = homeAccountId?.asciiLowercased ?? ""
        let authorityEnvironment = request.authority.environment

        // Access token: replaces tokens with intersecting scopes in its bucket (rule 4); one
        // with exactly the same scopes is updated in place (keeping another SDK's key). The
        // bucket is the token's own, with an on-behalf-of token's assertion in place of its user.
        let token = accessToken
        var bucket = token.bucket
        if let assertion = token.assertionKey { bucket.account = assertion }
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
                return old.environment.isAlias(of: authorityEnvironment) && old.realm.asciiLowercased == shared.realm.value
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
            let existing = transaction.index.entries(account: account, kind: .idToken).first {
                guard case .idToken(let old) = $0.entry, old.clientId.asciiLowercased == client else { return false }
                return old.environment.isAlias(of: authorityEnvironment) && old.realm.asciiLowercased == shared.realm.value
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
        if !request.authority.isMultiTenant, requestedTenant != realm.asciiLowercased {
            transaction.setTenantAlias(requestedTenant, tenantId: realm.asciiLowercased)
        }

        if signIn, !account.isEmpty {
            transaction.updateClientState(client) { $0.signIn(account) }
        }
        return token
    }

    private func storeRefreshToken(_ token: RefreshToken, redeemed: EntryID?, into transaction: inout IndexTransaction) {
        let client = shared.client.value
        let account = homeAccountId?.asciiLowercased ?? ""
        if let redeemed, let stored = transaction.index[redeemed], case .refreshToken(let old) = stored.entry {
            let sameOwner = old.clientId.asciiLowercased == client
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
