/// An authority URL such as `https://login.microsoftonline.com/contoso.onmicrosoft.com`: the
/// cloud host (environment) and the tenant a request is for.
public struct Authority: Sendable, Hashable, CustomStringConvertible {
    /// The tenants that stand for "the user's home tenant" in a request.
    public static let multiTenantAliases: Set<String> = ["common", "organizations", "consumers"]

    /// The authority URL without a trailing slash.
    public let url: String
    /// The scheme and host part, such as `https://login.microsoftonline.com` (or
    /// `http://127.0.0.1:8080` for a local test authority).
    public let base: String
    /// The cloud host.
    public let environment: Environment
    /// The tenant, lower-cased (`common`, a GUID, a domain, or `adfs`).
    public let tenant: String

    /// Parses an authority URL. Throws `.invalidArgument` when it is not `http(s)://host/tenant`.
    public init(_ url: String) throws {
        var text = url
        while text.hasSuffix("/") { text.removeLast() }
        let scheme: String
        if text.lowercased().hasPrefix("https://") {
            scheme = "https://"
        } else if text.lowercased().hasPrefix("http://") {
            scheme = "http://"
        } else {
            throw TokenCacheError(
                .invalidArgument, "an authority must be an https URL such as https://login.microsoftonline.com/common")
        }
        let rest = text.dropFirst(scheme.count)
        let parts = rest.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count >= 1, !parts[0].isEmpty else {
            throw TokenCacheError(
                .invalidArgument, "an authority URL needs a host and a tenant, such as https://login.microsoftonline.com/common")
        }
        let hostAndPort = String(parts[0])
        let host = hostAndPort.split(separator: ":").first.map(String.init) ?? hostAndPort
        self.url = text
        self.base = scheme + hostAndPort
        self.environment = Environment(host)
        self.tenant = parts.count > 1 ? parts[1].lowercased() : "common"
    }

    /// The authority for `tenant` on a host: `https://<host>/<tenant>`.
    public init(host: String, tenant: String) {
        // Cannot fail: the URL is built from parts.
        try! self.init("https://\(host)/\(tenant)")
    }

    /// Whether `tenant` is a tenant id: a GUID in its 8-4-4-4-12 hex form.
    static func isTenantId(_ tenant: String) -> Bool {
        let utf8 = Array(tenant.utf8)
        guard utf8.count == 36 else { return false }
        for (position, byte) in utf8.enumerated() {
            if position == 8 || position == 13 || position == 18 || position == 23 {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                guard
                    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                        || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
                else { return false }
            }
        }
        return true
    }

    /// Whether the tenant is `common`, `organizations` or `consumers`.
    public var isMultiTenant: Bool { Self.multiTenantAliases.contains(tenant) }

    /// The OAuth 2.0 token endpoint (`<authority>/oauth2/v2.0/token`; `adfs` uses `/oauth2/token`).
    public var tokenEndpoint: String {
        tenant == "adfs" ? "\(base)/adfs/oauth2/token" : "\(base)/\(tenant)/oauth2/v2.0/token"
    }

    /// A description for people; never contains a secret.
    public var description: String { url }
}
