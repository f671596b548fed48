/// A cloud host and the alias group it belongs to.
///
/// An entry written by one SDK under `login.windows.net` must be found by an app configured for
/// `login.microsoftonline.com`: hosts of one group are interchangeable for cache lookups. Any
/// host outside the known groups (ADFS, B2C, CIAM) is a group of its own.
public struct Environment: Sendable, Hashable, CustomStringConvertible {
    /// The known alias groups; the first host of each is the one preferred for the network.
    public static let aliasGroups: [[String]] = [
        ["login.microsoftonline.com", "login.windows.net", "login.microsoft.com", "sts.windows.net"],
        ["login.partner.microsoftonline.cn", "login.chinacloudapi.cn"],
        ["login.microsoftonline.us", "login.usgovcloudapi.net"],
        ["login-us.microsoftonline.com"],
        ["login.microsoftonline.de"],
        ["login.windows-ppe.net", "sts.windows-ppe.net", "login.microsoft-ppe.com"],
    ]

    private static let groupOfHost: [String: String] = {
        var map: [String: String] = [:]
        for group in aliasGroups { for host in group { map[host] = group[0] } }
        return map
    }()

    /// The parsed forms, shared by every copy (a copy is one retain).
    private final class Storage: Sendable {
        let host: String
        let groupKey: HashedString

        init(_ host: String, ownCopies: Bool = false) {
            var normalised = host.asciiLowercased
            if normalised.hasSuffix(".") { normalised.removeLast() }
            let group = Environment.groupOfHost[normalised] ?? normalised
            // A decoding thread makes its own copies: strings every entry retains must not be
            // shared with other threads, or their reference counts bounce between processors.
            self.host = ownCopies ? String(decoding: Array(normalised.utf8), as: UTF8.self) : normalised
            groupKey = HashedString(ownCopies ? String(decoding: Array(group.utf8), as: UTF8.self) : group)
        }
    }

    private let storage: Storage

    /// The host as written in the cache entry or the authority (lower-cased).
    public var host: String { storage.host }
    /// The first host of the alias group: equal for every alias of one cloud.
    public var group: String { storage.groupKey.value }
    /// ``group`` with its hash: what the index files entries under.
    var groupKey: HashedString { storage.groupKey }

    /// The environment of a host name; case and a trailing dot do not matter.
    public init(_ host: String) {
        storage = Self.knownHosts[host] ?? Storage(host)
    }

    /// The environment of a host name, in objects of its own (not the process-wide ones of the
    /// known hosts): for a thread that will copy it into thousands of entries.
    init(unshared host: String) {
        storage = Storage(host, ownCopies: true)
    }

    /// The parsed form of every known alias host, made once: nearly every entry and request
    /// names one of these, so making an `Environment` for them allocates nothing.
    private static let knownHosts: [String: Storage] = {
        var known: [String: Storage] = [:]
        for group in aliasGroups { for host in group { known[host] = Storage(host) } }
        return known
    }()

    /// The hosts this one stands for in lookups: its alias group, or itself.
    public var aliases: [String] {
        Self.aliasGroups.first { $0[0] == group } ?? [host]
    }

    /// Whether two hosts are aliases of one cloud.
    public func isAlias(of other: Environment) -> Bool { groupKey == other.groupKey }

    /// A description for people; never contains a secret.
    public var description: String { host }

    /// Whether two values name the same host.
    public static func == (lhs: Environment, rhs: Environment) -> Bool { lhs.storage === rhs.storage || lhs.host == rhs.host }
    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(host) }
}
