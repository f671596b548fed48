import Foundation
import Synchronization
import Testing

@testable import SecureTokenCache

/// Test fixtures and builders shared by the suites.
enum Fixtures {
    static let vectorNames = ["v1_single_account", "v2_two_accounts_two_tenants", "v3_foci_two_clients"]

    static func vector(_ name: String) throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Fixtures"))
        return Array(try Data(contentsOf: url))
    }

    /// A clock fixed at `now` (msal-python's vectors were written at 1700000000).
    static func group(now: Int64 = 1_700_000_000, name: String = "test") throws -> CacheGroup {
        try CacheGroup(name: name, store: MemoryStore(name: name), clock: { now })
    }

    static func jwt(_ claims: JSONObject) -> String {
        var payload: [UInt8] = []
        JSONWriter.write(.object(claims), style: .compact, into: &payload)
        return Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8)) + "." + Base64URL.encode(payload) + "."
    }

    static func clientInfo(uid: String, utid: String) -> String {
        Base64URL.encode(Array(#"{"uid":"\#(uid)","utid":"\#(utid)"}"#.utf8))
    }

    static let tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"
    static let guestTenant = "f645ad92-e38d-4d1a-b510-d1b09a74a8ca"
    static let clientA = "11111111-aaaa-4bbb-8ccc-000000000001"
    static let clientB = "22222222-aaaa-4bbb-8ccc-000000000002"
    static let clientC = "44444444-aaaa-4bbb-8ccc-000000000004"

    /// A token response for a user, as Entra ID would send it.
    static func response(
        uid: String = "00000000-0000-0000-1111-000000000001",
        tenant: String = Fixtures.tenant,
        username: String = "Alice@Contoso.com",
        accessToken: String = "at-secret",
        refreshToken: String? = "rt-secret",
        scope: String? = "User.Read openid profile",
        expiresIn: Int = 3600,
        foci: String? = nil,
        extra: JSONObject = [:]
    ) throws -> TokenResponse {
        var fields: JSONObject = [
            "token_type": .string("Bearer"),
            "access_token": .string(accessToken),
            "expires_in": .number(String(expiresIn)),
            "ext_expires_in": .number(String(expiresIn)),
            "client_info": .string(clientInfo(uid: uid, utid: tenant)),
            "id_token": .string(
                jwt([
                    "aud": .string(clientA), "iss": .string("https://login.microsoftonline.com/\(tenant)/v2.0"),
                    "oid": .string(uid), "preferred_username": .string(username), "sub": .string("sub-\(uid)"),
                    "tid": .string(tenant), "name": .string("Test User"),
                ])),
        ]
        if let refreshToken { fields["refresh_token"] = .string(refreshToken) }
        if let scope { fields["scope"] = .string(scope) }
        if let foci { fields["foci"] = .string(foci) }
        for (key, value) in extra { fields[key] = value }
        return try TokenResponse(fields: fields)
    }

    static func request(
        client: String = Fixtures.clientA,
        authority: String = "https://login.microsoftonline.com/common",
        scopes: Scopes = ["User.Read"]
    ) throws -> TokenRequest {
        TokenRequest(clientId: client, authority: try Authority(authority), scopes: scopes, grantType: "authorization_code")
    }
}
