#if DEBUG
    @testable import SecureTokenCache

    /// The account `msal_ext_peer.py account` describes, and its token responses: what the engine
    /// stores, so that its tokens and msal-python's are each other's hits. The shared-cache peer
    /// tests use it too (`@testable import stc_testhelper`), so that the helper's writers and the
    /// tests' own stores make the same responses.
    struct SharedPeerAccount: Sendable {
        let clientId: String
        let authority: Authority
        let username: String
        let template: JSONObject
        /// What the script printed, as the writers of ours (`PeerCompare shared-write`,
        /// `stc-testhelper shared-churn`) take it.
        let json: String

        init(json: String) throws {
            guard case .object(let account) = try JSONParser.parse(json),
                case .string(let clientId)? = account["client_id"], case .string(let authority)? = account["authority"],
                case .string(let username)? = account["username"], case .object(let template)? = account["response"]
            else { throw TokenCacheError(.invalidArgument, "not what msal_ext_peer.py account prints: \(json)") }
            self.clientId = clientId
            self.authority = try Authority(authority)
            self.username = username
            self.template = template
            self.json = json
        }

        /// The account's token response with one access token, `secret`, for `scope`.
        func response(scope: String, secret: String) throws -> TokenResponse {
            var fields = template
            fields["scope"] = .string(scope)
            fields["access_token"] = .string(secret)
            return try TokenResponse(fields: fields)
        }

        func request(scope: String) -> TokenRequest {
            TokenRequest(clientId: clientId, authority: authority, scopes: [scope], grantType: "authorization_code")
        }
    }
#endif
