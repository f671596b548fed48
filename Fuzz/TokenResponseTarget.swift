/// A token endpoint's answer, validated (``TokenResponse``) and stored (``TokenCache/store(_:for:signIn:)``),
/// and the decoders under it (``Base64URL``, the id token's claims).
///
/// The input is a response as JSON; with NUL bytes in it, the parts after the first are the id
/// token's claims and the `client_info` object as JSON, which the target encodes as a server
/// would and puts into the response (so mutations reach the claims instead of dying in base64).
///
/// Properties: a response is refused with `.malformedResponse` and the group is unchanged, or its
/// entries are stored and their export imports again to the same export; base64url decoding
/// round-trips what it accepts; a JWT's claims are an object or a typed error.
enum TokenResponseTarget {
    static let request = TokenRequest(
        clientId: "11111111-aaaa-4bbb-8ccc-000000000001",
        authority: Authority(host: "login.microsoftonline.com", tenant: "common"), scopes: ["User.Read"],
        grantType: "authorization_code")

    static func check(_ input: [UInt8]) {
        checkDecoders(input)
        let parts = FuzzProperty.parts(input)
        let response: TokenResponse
        do {
            if parts.count == 1 {
                response = try TokenResponse(json: input)
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
        let before = FuzzProperty.export(group)
        do {
            let cache = try TokenCache(clientId: request.clientId, group: group)
            try cache.store(response, for: request)
        } catch {
            FuzzProperty.requireTyped(error, [.malformedResponse], "storing a token response")
            FuzzProperty.require(FuzzProperty.export(group) == before, "a refused response changed the group")
            return
        }
        let exported = FuzzProperty.export(group)
        let again = FuzzProperty.group()
        do {
            try again.importMSAL(exported)
        } catch {
            FuzzProperty.require(false, "the entries of a stored response do not import again: \(error)")
        }
        FuzzProperty.require(FuzzProperty.export(again) == exported, "a stored response's export does not import to itself")
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
