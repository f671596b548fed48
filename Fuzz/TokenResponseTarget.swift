/// A token endpoint's answer, validated (``TokenResponse``) and stored as the request it answers
/// says, and the decoders under it (``Base64URL``, the id token's claims).
///
/// The input's first byte chooses the request and how its answer is stored (its value modulo the
/// number of ``Flow``s: `0` a sign-in, `1` an app token, `2` an on-behalf-of token, `3` a
/// long-running session's start, `4` a user's refresh, `5` a session's renewal), so the checks of
/// the server flows (no user's tokens in an app token's answer, `expires_in` required, a tenant
/// for the assertion) are fuzzed with the rest. The rest of the input is a response as JSON;
/// with NUL bytes in it, the parts after the first are the id token's claims and the
/// `client_info` object as JSON, which the target encodes as a server would and puts into the
/// response (so mutations reach the claims instead of dying in base64).
///
/// Properties: a response is refused with `.malformedResponse` and the group is unchanged, or its
/// entries are stored, the access token stored is the response's, and their export imports again
/// to the same export; base64url decoding round-trips what it accepts; a JWT's claims are an
/// object or a typed error.
enum TokenResponseTarget {
    static let client = "11111111-aaaa-4bbb-8ccc-000000000001"
    static let tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"
    static let sessionKey = "fuzz-session"

    /// The caller's token an on-behalf-of request redeems, issued in ``tenant``.
    static let assertion = try! UserAssertion(
        Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "."
            + Base64URL.encode(Array(#"{"tid":"72f988bf-86f1-41af-91ab-2d7cd011db47","oid":"o"}"#.utf8)) + ".s")

    /// What the response answers, and how the cache stores it.
    enum Flow: CaseIterable {
        case signIn, appToken, onBehalfOf, longRunningStart, refresh, longRunningRenewal

        var request: TokenRequest {
            let common = Authority(host: "login.microsoftonline.com", tenant: "common")
            let tenanted = Authority(host: "login.microsoftonline.com", tenant: TokenResponseTarget.tenant)
            let downstream: Scopes = ["https://graph.microsoft.com/User.Read"]
            return switch self {
            case .signIn:
                TokenRequest(clientId: client, authority: common, scopes: ["User.Read"], grantType: "authorization_code")
            case .appToken:
                TokenRequest(
                    clientId: client, authority: tenanted, scopes: ["https://graph.microsoft.com/.default"],
                    grantType: TokenCache.clientCredentialsGrant)
            case .onBehalfOf, .longRunningStart:
                TokenRequest(clientId: client, authority: common, scopes: downstream, grantType: TokenCache.onBehalfOfGrant)
            case .refresh:
                TokenRequest(clientId: client, authority: common, scopes: ["User.Read"], grantType: TokenCache.refreshTokenGrant)
            case .longRunningRenewal:
                TokenRequest(clientId: client, authority: tenanted, scopes: downstream, grantType: TokenCache.refreshTokenGrant)
            }
        }

        /// Stores `response` as this flow does; returns the access token stored.
        func store(_ response: TokenResponse, in cache: TokenCache) throws -> AccessToken {
            switch self {
            case .signIn: try cache.store(response, for: request)
            case .appToken: try cache.storeAppToken(response, for: request)
            case .onBehalfOf: try cache.storeOnBehalfOfToken(response, for: request, assertion: assertion)
            case .longRunningStart:
                try cache.storeLongRunningToken(response, for: request, sessionKey: sessionKey, assertion: assertion)
            case .refresh: try cache.store(response, for: request, signIn: false)
            case .longRunningRenewal: try cache.storeLongRunningToken(response, for: request, sessionKey: sessionKey)
            }
        }
    }

    /// A session started before the renewal the input answers, so that the renewal replaces its
    /// refresh token.
    static let sessionStart = try! TokenResponse(
        json: Array(#"{"access_token": "started", "refresh_token": "session-rt", "expires_in": 3600}"#.utf8))

    static func check(_ input: [UInt8]) {
        guard let selector = input.first else { return }
        let flow = Flow.allCases[Int(selector) % Flow.allCases.count]
        let body = Array(input.dropFirst())
        checkDecoders(body)
        let parts = FuzzProperty.parts(body)
        let response: TokenResponse
        do {
            if parts.count == 1 {
                response = try TokenResponse(json: body)
            } else {
                guard case .object(var fields)? = try? JSONParser.parse(parts[0]) else { return }
                fields["id_token"] = .string(
                    Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64URL.encode(parts[1]) + ".")
                if parts.count > 2 { fields["client_info"] = .string(Base64URL.encode(parts[2])) }
                response = try TokenResponse(fields: fields)
            }
        } catch {
            FuzzProperty.requireTyped(error, [.malformedResponse], "parsing a token response")
            return
        }
        let group = FuzzProperty.group()
        try! group.importMSAL(FuzzProperty.occupiedDocument)
        let cache = try! TokenCache(clientId: client, group: group)
        if flow == .longRunningRenewal { try! Flow.longRunningStart.store(sessionStart, in: cache) }
        let before = FuzzProperty.export(group)
        let stored: AccessToken
        do {
            stored = try flow.store(response, in: cache)
        } catch {
            FuzzProperty.requireTyped(error, [.malformedResponse], "storing a token response (\(flow))")
            FuzzProperty.require(FuzzProperty.export(group) == before, "a refused response changed the group (\(flow))")
            return
        }
        FuzzProperty.require(stored.secret == response.accessToken, "the token stored is not the response's (\(flow))")
        let exported = FuzzProperty.export(group)
        let again = FuzzProperty.group()
        do {
            try again.importMSAL(exported)
        } catch {
            FuzzProperty.require(false, "the entries of a stored response do not import again (\(flow)): \(error)")
        }
        FuzzProperty.require(
            FuzzProperty.export(again) == exported, "a stored response's export does not import to itself (\(flow))")
    }

    /// The decoders on the raw input, read as text.
    static func checkDecoders(_ input: [UInt8]) {
        let text = String(decoding: input, as: UTF8.self)
        if let decoded = Base64URL.decode(text) {
            FuzzProperty.require(Base64URL.decode(Base64URL.encode(decoded)) == decoded, "base64url does not round-trip")
        }
        do {
            _ = try TokenResponse.claims(ofJWT: text)
        } catch {
            FuzzProperty.requireTyped(error, [.malformedResponse], "decoding a JWT's claims")
        }
    }
}
