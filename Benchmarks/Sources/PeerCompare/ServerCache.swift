import Foundation
import Glibc
import SecureTokenCache

/// A web API's cache, as `PeerCompare obo-hit` and `bounded-obo` fill it: one on-behalf-of token
/// per caller, redeemed from the caller's bearer token, with the caller's id token and account,
/// at the sizes Entra ID issues them.
struct ServerWorkload {
    static let webAPI = "66666666-aaaa-4bbb-8ccc-000000000006"
    static let tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"
    static let downstream: Scopes = ["api://downstream/Data.Read"]
    let authority: Authority
    let request: TokenRequest

    init() throws {
        authority = try Authority("https://login.microsoftonline.com/\(Self.tenant)")
        request = TokenRequest(
            clientId: Self.webAPI, authority: authority, scopes: Self.downstream, grantType: TokenCache.onBehalfOfGrant)
    }

    /// Caller `number`'s object id.
    static func user(_ number: Int) -> String {
        let digits = String(number)
        return "00000000-0000-0000-3333-" + String(repeating: "0", count: max(0, 12 - digits.count)) + digits
    }

    /// base64url of `text`, without padding.
    static func base64URL(_ text: String) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var value = 0
            for byte in chunk { value = value << 8 | Int(byte) }
            value <<= 8 * (3 - chunk.count)
            for position in 0...chunk.count { out.append(alphabet[(value >> (18 - 6 * position)) & 63]) }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    static let header = base64URL(#"{"alg":"RS256","typ":"JWT","kid":"key-1"}"#)
    static let signature = String(repeating: "s", count: 342)
    static let aio = String(repeating: "a", count: 300)
    static let filler = String(repeating: "x", count: 700)

    /// A JWT-shaped token with `claims` and an RS256-sized signature.
    static func jwt(_ claims: String) -> String { header + "." + base64URL(claims) + "." + signature }

    /// The bearer token caller `number` sends the web API (about 1.4 KB, as Entra ID's are).
    static func assertion(_ number: Int) throws -> UserAssertion {
        let claims =
            #"{"aud":"api://web-api","iss":"https://sts.windows.net/\#(tenant)/","iat":1700000000,"nbf":1700000000,"#
            + #""exp":1700003600,"oid":"\#(user(number))","tid":"\#(tenant)","scp":"access_as_user","#
            + #""name":"Caller \#(number)","preferred_username":"caller\#(number)@contoso.com","ver":"2.0","#
            + #""aio":"\#(aio)"}"#
        return try UserAssertion(jwt(claims))
    }

    /// The OBO answer for caller `number`: a 1.5 KB access token, the caller's id token and
    /// client_info.
    func response(_ number: Int) throws -> TokenResponse {
        let user = Self.user(number)
        let idToken = Self.jwt(
            #"{"aud":"\#(Self.webAPI)","iss":"https://login.microsoftonline.com/\#(Self.tenant)/v2.0","oid":"\#(user)","#
                + #""tid":"\#(Self.tenant)","preferred_username":"caller\#(number)@contoso.com","name":"Caller \#(number)"}"#)
        return try TokenResponse(fields: [
            "token_type": .string("Bearer"), "scope": .string("api://downstream/Data.Read"),
            "expires_in": .number("3599"), "ext_expires_in": .number("3599"),
            "access_token": .string(
                Self.jwt(
                    #"{"aud":"api://downstream","oid":"\#(user)","n":\#(number),"x":"\#(Self.filler)"}"#)),
            "id_token": .string(idToken),
            "client_info": .string(Self.base64URL(#"{"uid":"\#(user)","utid":"\#(Self.tenant)"}"#)),
        ])
    }

    /// Stores caller `number`'s token in `cache`.
    func store(_ number: Int, in cache: TokenCache) throws {
        try cache.storeOnBehalfOfToken(try response(number), for: request, assertion: try Self.assertion(number))
    }
}

/// The process's resident memory, in bytes.
func residentBytes() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = statm.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// `PeerCompare obo-hit USERS`: a web API's cache with one caller's on-behalf-of token per
/// user; times a hit for one caller, by lookup (the assertion already parsed, as a web API
/// holds it for the request) and by acquisition, and the hit with the bearer token parsed and
/// hashed in each call.
func measureOnBehalfOfHit(users: Int, repeats: Int) async throws {
    let workload = try ServerWorkload()
    let cache = try TokenCache(clientId: ServerWorkload.webAPI, group: CacheGroup(inMemory: "stc-compare-obo"))
    for number in 0..<users { try workload.store(number, in: cache) }
    let assertion = try ServerWorkload.assertion(users / 2)
    guard try cache.onBehalfOfToken(for: ServerWorkload.downstream, assertion: assertion, authority: workload.authority) != nil
    else { fatalError("obo-hit: no token for the caller") }
    try loop("memory.oboHit.\(users)", iterations: 20_000, repeats: repeats) {
        consume(try cache.onBehalfOfToken(for: ServerWorkload.downstream, assertion: assertion, authority: workload.authority))
    }
    let client = ConfidentialClient(cache: cache, credentialKind: .secret, endpoint: NoEndpoint())
    try await loop("memory.oboAcquireHit.\(users)", iterations: 20_000, repeats: repeats) {
        consume(
            try await client.acquireOnBehalfOfToken(
                for: ServerWorkload.downstream, assertion: assertion, authority: workload.authority, credential: .secret("unused")
            ))
    }
    let bearer = assertion.jwt
    try await loop("memory.oboAcquireHitParsing.\(users)", iterations: 20_000, repeats: repeats) {
        consume(
            try await client.acquireOnBehalfOfToken(
                for: ServerWorkload.downstream, assertion: try UserAssertion(bearer), authority: workload.authority,
                credential: .secret("unused")))
    }
}

/// `PeerCompare bounded-obo ASSERTIONS LIMIT-MB`: a web API's cache bounded to LIMIT-MB stores
/// one on-behalf-of token for each of ASSERTIONS distinct callers; records the process's
/// resident memory above what it was before the first store (its peak, sampled every 1,000
/// stores), what the group counts, the partitions left, and the time per store.
func measureBoundedOnBehalfOf(assertions: Int, limitMB: Int) throws {
    let workload = try ServerWorkload()
    var configuration = CacheConfiguration(store: .memory)
    configuration.memoryLimit = limitMB << 20
    let group = try CacheGroup.open("stc-compare-bounded", configuration: configuration)
    let cache = try TokenCache(clientId: ServerWorkload.webAPI, group: group)
    // What the process holds before the cache holds anything (code, the first allocations).
    try workload.store(-1, in: cache)
    try group.clear(.all)
    let baseline = residentBytes()
    var peak = 0
    var peakUse = 0
    let start = now()
    for number in 0..<assertions {
        try workload.store(number, in: cache)
        if number % 1_000 == 999 {
            peak = max(peak, residentBytes() - baseline)
            peakUse = max(peakUse, group.memoryUse ?? 0)
        }
    }
    let perStore = Double(now() - start) / Double(assertions)
    let partitions = try group.partitions()
    let kept = partitions.filter { $0.partition.holder == .onBehalfOf }.count
    let limit = Double(limitMB << 20)
    results.append(
        (
            "bounded.rssPeakGrowth.\(assertions)",
            Measurement(
                ns: Double(peak), samples: assertions / 1_000,
                note: "bytes of resident memory above the baseline, at most; limit \(limitMB) MB")
        ))
    results.append(
        (
            "bounded.peakUse.\(assertions)",
            Measurement(
                ns: Double(peakUse), samples: assertions / 1_000,
                note: "bytes the group counted, at most")
        ))
    results.append(
        (
            "bounded.keptPartitions.\(assertions)",
            Measurement(
                ns: Double(kept), samples: 1,
                note: "on-behalf-of partitions left of \(assertions)")
        ))
    results.append(
        (
            "bounded.store.\(assertions)",
            Measurement(
                ns: perStore, samples: assertions,
                note: "ns per store, evictions included; peak growth \(Int(Double(peak) / limit * 100))% of the limit")
        ))
}
