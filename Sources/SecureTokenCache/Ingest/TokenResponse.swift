/// A token endpoint's successful answer (RFC 6749 §5.1 plus Microsoft's fields), validated.
///
/// Parsing checks everything ingest relies on, so a malformed answer is rejected before
/// anything is stored: a missing access token, an id token that is not a JWT, `client_info`
/// that is not base64url JSON, or a non-numeric `expires_in` each throw `.malformedResponse`.
/// Messages name the field, never its value.
public struct TokenResponse: Sendable {
    /// The response as received.
    public let fields: JSONObject
    /// The access token.
    let accessToken: String
    /// The refresh token, when one was issued.
    let refreshToken: String?
    /// The raw id token, when one was issued.
    let idToken: String?
    /// The id token's claims (empty without an id token).
    let idTokenClaims: JSONObject
    /// The decoded `client_info`, when present.
    let clientInfo: JSONObject?
    let expiresIn: Int64?
    let expiresOn: Int64?
    let extendedExpiresIn: Int64?
    let refreshIn: Int64?
    /// The granted scopes, when the server listed them.
    public let grantedScopes: Scopes?
    /// `Bearer`, `pop`, `ssh-cert`, ...
    public let tokenType: String
    /// The FOCI family id (`"1"`), when the refresh token is a family refresh token.
    public let familyId: String?

    /// Validates a token response given as JSON text.
    public init(json: some Collection<UInt8>) throws {
        let value: JSONValue
        do {
            value = try JSONParser.parse(json)
        } catch {
            throw TokenCacheError(.malformedResponse, "the token response is not valid JSON")
        }
        guard case .object(let object) = value else {
            throw TokenCacheError(.malformedResponse, "the token response is not a JSON object")
        }
        try self.init(fields: object)
    }

    /// Validates a token response given as a JSON object.
    public init(fields: JSONObject) throws {
        self.fields = fields
        guard let accessToken = fields["access_token"]?.stringValue, !accessToken.isEmpty else {
            throw TokenCacheError(.malformedResponse, "the token response has no access_token; nothing was stored")
        }
        self.accessToken = accessToken
        refreshToken = try Self.optionalString(fields, "refresh_token").flatMap { $0.isEmpty ? nil : $0 }
        if let idToken = try Self.optionalString(fields, "id_token"), !idToken.isEmpty {
            self.idToken = idToken
            idTokenClaims = try Self.claims(ofJWT: idToken)
        } else {
            idToken = nil
            idTokenClaims = JSONObject()
        }
        if let encoded = try Self.optionalString(fields, "client_info"), !encoded.isEmpty {
            guard let bytes = Base64URL.decode(encoded), case .object(let info)? = try? JSONParser.parse(bytes) else {
                throw TokenCacheError(
                    .malformedResponse, "the token response's client_info is not base64url-encoded JSON; nothing was stored")
            }
            clientInfo = info
        } else {
            clientInfo = nil
        }
        expiresIn = try Self.seconds(fields, "expires_in")
        expiresOn = try Self.seconds(fields, "expires_on")
        extendedExpiresIn = try Self.seconds(fields, "ext_expires_in")
        refreshIn = try Self.seconds(fields, "refresh_in")
        grantedScopes = try Self.optionalString(fields, "scope").map { Scopes(target: $0) }
        let type = try Self.optionalString(fields, "token_type") ?? ""
        tokenType = type.isEmpty ? "Bearer" : type
        familyId = try Self.optionalString(fields, "foci").flatMap { $0.isEmpty ? nil : $0 }
    }

    private static func optionalString(_ fields: JSONObject, _ name: String) throws -> String? {
        switch fields[name] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        case .number(let literal)?: return literal
        default: throw TokenCacheError(.malformedResponse, "the token response's \(name) is not a string; nothing was stored")
        }
    }

    /// The largest magnitude a lifetime or timestamp field may have.
    static let maximumSeconds: UInt64 = 1 << 40

    private static func seconds(_ fields: JSONObject, _ name: String) throws -> Int64? {
        guard let value = fields[name], value != .null else { return nil }
        // Ingest adds these to the clock, where a value near Int64.max would trap on overflow.
        // No real lifetime or timestamp comes near 2^40 s, so larger magnitudes are malformed.
        guard let seconds = value.integerValue, seconds.magnitude <= Self.maximumSeconds else {
            throw TokenCacheError(
                .malformedResponse, "the token response's \(name) is not a number of seconds; nothing was stored")
        }
        return seconds
    }

    /// The payload of a JWT (`header.payload.signature`), not validated: MSAL trusts the TLS
    /// channel it came over, as every MSAL SDK does.
    static func claims(ofJWT jwt: String) throws -> JSONObject {
        // By UTF-8 bytes, as UserAssertion splits: a JWT is ASCII.
        let parts = jwt.utf8.split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(Substring(parts[1])),
            case .object(let claims)? = try? JSONParser.parse(payload)
        else {
            throw TokenCacheError(.malformedResponse, "the token response's id_token is not a JWT; nothing was stored")
        }
        return claims
    }
}
