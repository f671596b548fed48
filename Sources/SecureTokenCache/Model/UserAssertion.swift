import CSodium

/// The access token a web API received from its caller, as the on-behalf-of (OBO) flow
/// redeems it for a downstream API's token.
///
/// The cache never keeps the assertion: it files the downstream tokens under ``hash``, the key
/// MSAL.NET, msal4j and msal-node file them under (`user_assertion_hash`), so only a caller
/// holding the same assertion finds them.
///
/// The assertion is read as a JWT but not validated: the web API validated it before asking
/// for a downstream token, and the authority validates it again when redeeming it.
public struct UserAssertion: Sendable, Hashable {
    /// The assertion itself. Never log it.
    public let jwt: String
    /// base64url of the SHA-256 digest of the assertion's UTF-8 bytes, without padding.
    public let hash: String
    /// The tenant the assertion was issued in (its `tid` claim), when it names one.
    public let tenantId: String?
    /// The index key of ``hash`` (``key(of:)``), made once: a web API looks its caller's tokens
    /// up by it on every request.
    let key: HashedString

    /// The assertion `jwt`.
    ///
    /// - Throws: ``TokenCacheError`` `.invalidArgument` when `jwt` is not a JWT
    ///   (`header.payload.signature`, with a JSON object as its payload).
    public init(_ jwt: String) throws {
        // Split on the UTF-8 bytes: a bearer token is ASCII, and splitting by characters would
        // walk a kilobyte or more of grapheme clusters on every request.
        let parts = jwt.utf8.split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, let payload = Base64URL.decode(Substring(parts[1])),
            case .object(let claims)? = try? JSONParser.parse(payload)
        else {
            throw TokenCacheError(
                .invalidArgument,
                "the user assertion is not a JWT (header.payload.signature): pass the bearer token the web API received")
        }
        self.jwt = jwt
        hash = Self.hash(of: jwt)
        key = Self.key(of: hash) ?? .empty
        tenantId = claims.string("tid").flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The assertion hash of `text`, as MSAL.NET computes it.
    static func hash(of text: String) -> String {
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        var bytes = Array(text.utf8)
        _ = crypto_hash_sha256(&digest, &bytes, UInt64(bytes.count))
        return Base64URL.encode(digest)
    }

    /// The index key of a stored assertion hash: lower-cased, as MSAL.NET compares hashes
    /// ignoring case, and without the padding the Go SDK writes; `nil` for an empty one. (A hash
    /// of padding only keeps it, so that every hash with text has a key, as the index expects of
    /// every part it files by.)
    static func key(of storedHash: String) -> HashedString? {
        guard !storedHash.isEmpty else { return nil }
        var text = Substring(storedHash)
        while text.last == "=" { text.removeLast() }
        return HashedString(String(text.isEmpty ? Substring(storedHash) : text).asciiLowercased)
    }

    /// The members the SDKs store the hash in: `user_assertion_hash` (MSAL.NET, msal4j, Go) and
    /// `userAssertionHash` (msal-node).
    static let memberNames = ["user_assertion_hash", "userAssertionHash"]

    /// Whether `name` (UTF-8) is one of ``memberNames``.
    static func isMemberName(_ name: UnsafeRawBufferPointer) -> Bool {
        memberNameBytes.contains { $0.elementsEqual(name) }
    }

    private static let memberNameBytes = memberNames.map { Array($0.utf8) }
}
