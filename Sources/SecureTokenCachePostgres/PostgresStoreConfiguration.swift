import SecureTokenCache

/// Where a fleet's shared cache lives: a PostgreSQL server, a database on it, and how to log in.
///
/// Every instance of a fleet opens the group with the same configuration and the same key
/// source (``CacheConfiguration/keySource``); the database sees only sealed rows and keyed
/// names.
///
/// ```swift
/// let database = try PostgresStoreConfiguration(url: "postgres://tokens@db.internal:5432/tokens?sslmode=require")
/// let group = try CacheGroup.open(
///     "com.contoso.api", postgres: database,
///     configuration: CacheConfiguration(keySource: .keyFile(path: "/etc/contoso/token-cache.key")))
/// ```
public struct PostgresStoreConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// How to reach the server.
    public enum Endpoint: Sendable, Hashable {
        /// TCP, to `host` on `port`.
        case tcp(host: String, port: Int)
        /// A Unix domain socket: the socket file itself (`<folder>/.s.PGSQL.<port>`).
        case unixSocket(path: String)
    }

    /// Whether the connection is encrypted with TLS.
    public enum TLSMode: String, Sendable, Hashable {
        /// Never (a Unix socket, or loopback).
        case disable
        /// When the server offers it (libpq's default).
        case prefer
        /// Always; the server's certificate is verified against the system's trust roots.
        case require
    }

    /// How to reach the server.
    public var endpoint: Endpoint
    /// The role to log in as.
    public var username: String
    /// The role's password, or `nil` when the server needs none (peer or trust authentication).
    /// Never printed.
    public var password: String?
    /// The database, or `nil` for the one named like the role.
    public var database: String?
    /// Whether to use TLS. Default: `.prefer` over TCP, `.disable` on a Unix socket.
    public var tls: TLSMode
    /// How long one call may wait for the database (a round trip, or a connection when none is
    /// free) before it fails with ``TokenCacheError/Code/databaseUnavailable``. Default: 5 seconds.
    public var timeout: Duration = .seconds(5)
    /// The most connections this process opens for its reads and writes (one more listens for
    /// the other instances' commits), at least 2. A refresh holds one for its lock across
    /// instances while its reads and writes use another, so locks held at once are at most one
    /// fewer; a refresh that waits past its lock timeout for one fails with
    /// ``TokenCacheError/Code/lockTimeout``. Default: 8.
    public var maximumConnections: Int = 8
    /// How often the connection that listens for the other instances' commits is checked with a
    /// round trip (answered within ``timeout``). A listener only reads: a connection the network
    /// dropped without a word (a firewall's idle timeout, a failover without a reset) would
    /// otherwise stay silent for good, and the other instances' commits go unheard. One that does
    /// not answer is replaced, and the process reads what it missed. Default: 10 seconds.
    public var listenerCheckInterval: Duration = .seconds(10)
    /// A partition (a user, an app's tenant, an on-behalf-of caller) that no instance wrote for
    /// this long is deleted by the sweeps that follow every few hundred commits; `nil` for never.
    /// Default: 90 days, the longest a refresh token stays valid unused.
    public var idlePartitionAge: Duration? = .seconds(90 * 24 * 3600)

    /// A configuration with these parts.
    public init(
        endpoint: Endpoint, username: String, password: String? = nil, database: String? = nil, tls: TLSMode? = nil
    ) {
        self.endpoint = endpoint
        self.username = username
        self.password = password
        self.database = database
        if case .unixSocket = endpoint {
            self.tls = tls ?? .disable
        } else {
            self.tls = tls ?? .prefer
        }
    }

    /// A configuration from a libpq connection URI:
    /// `postgres://user:password@host:port/database?sslmode=require`, or with a Unix socket,
    /// `postgres://user@/database?host=/run/postgresql` (the socket's folder, as libpq takes it;
    /// the port names the socket file). Percent-escapes are decoded.
    ///
    /// - Throws: ``TokenCacheError/Code/invalidArgument`` saying what is wrong (never quoting the
    ///   password).
    public init(url: String) throws {
        func invalid(_ why: String) -> TokenCacheError {
            TokenCacheError(
                .invalidArgument,
                "\(why); write the database URL as postgres://user@host:port/database?sslmode=require, with the password in PGPASSWORD or in the URL after the user (user:password@)"
            )
        }
        var rest = Substring(url)
        if rest.hasPrefix("postgres://") {
            rest = rest.dropFirst("postgres://".count)
        } else if rest.hasPrefix("postgresql://") {
            rest = rest.dropFirst("postgresql://".count)
        } else {
            throw invalid("the database URL does not start with postgres://")
        }
        var query: [String: String] = [:]
        if let mark = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: mark)...].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, let value = Self.decode(parts[1]) else {
                    // Not quoted: text after a `?` the password did not percent-encode is the
                    // rest of the password.
                    throw invalid(
                        "a parameter in the database URL has no readable value (percent-encode any ?, & or % in the password)")
                }
                query[String(parts[0])] = value
            }
            rest = rest[..<mark]
        }
        var path = ""
        if let slash = rest.firstIndex(of: "/") {
            path = String(rest[rest.index(after: slash)...])
            rest = rest[..<slash]
        }
        var username: String? = nil
        var password: String? = nil
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                username = Self.decode(credentials[..<colon])
                password = Self.decode(credentials[credentials.index(after: colon)...])
                guard password != nil else { throw invalid("the password in the database URL has a bad percent-escape") }
            } else {
                username = Self.decode(credentials)
            }
        }
        var host = String(rest)
        var port = 5432
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            guard let number = Int(rest[rest.index(after: colon)...]), (1...65535).contains(number) else {
                throw invalid("the port in the database URL is not a number from 1 to 65535")
            }
            port = number
            host = String(rest[..<colon])
        }
        if let number = query["port"] {
            guard let value = Int(number), (1...65535).contains(value) else {
                throw invalid("the port parameter of the database URL is not a number from 1 to 65535")
            }
            port = value
        }
        if let queryHost = query["host"] { host = queryHost }
        guard let user = username ?? query["user"], !user.isEmpty else {
            throw invalid("the database URL names no user")
        }
        var tls: TLSMode? = nil
        if let mode = query["sslmode"] {
            switch mode {
            case "disable": tls = .disable
            case "allow", "prefer": tls = .prefer
            case "require", "verify-ca", "verify-full": tls = .require
            default: throw invalid("sslmode=\(mode) in the database URL is not one of disable, prefer, require")
            }
        }
        let endpoint: Endpoint
        if host.hasPrefix("/") {
            endpoint = .unixSocket(path: host.hasSuffix("/.s.PGSQL.\(port)") ? host : host + "/.s.PGSQL.\(port)")
        } else {
            guard !host.isEmpty else { throw invalid("the database URL names no host") }
            endpoint = .tcp(host: host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host, port: port)
        }
        let database = Self.decode(Substring(path)) ?? path
        self.init(
            endpoint: endpoint, username: user, password: password ?? query["password"],
            database: database.isEmpty ? query["dbname"] : database, tls: tls)
        if let seconds = query["connect_timeout"], let value = Int(seconds), value > 0 { timeout = .seconds(value) }
    }

    /// Where the database is, without the password: `postgres://user@host:port/database`.
    public var description: String {
        let place =
            switch endpoint {
            case .tcp(let host, let port): "\(host.contains(":") ? "[\(host)]" : host):\(port)"
            case .unixSocket(let path): "[\(path)]"
            }
        return "postgres://\(username)@\(place)/\(database ?? username)"
    }

    /// The database without the role: `host:port/database`, for metrics and logs.
    var place: String {
        let server =
            switch endpoint {
            case .tcp(let host, let port): "\(host.contains(":") ? "[\(host)]" : host):\(port)"
            case .unixSocket(let path): path
            }
        return "\(server)/\(database ?? username)"
    }

    private static func decode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let high = utf8.index(after: index)
                // Two hex digits, no more and no less: UInt8(_:radix:) alone would also take a sign.
                guard high != utf8.endIndex, utf8.index(after: high) != utf8.endIndex,
                    let upper = HexDigit.value(utf8[high]), let lower = HexDigit.value(utf8[utf8.index(after: high)])
                else { return nil }
                bytes.append(upper << 4 | lower)
                index = utf8.index(high, offsetBy: 2)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
