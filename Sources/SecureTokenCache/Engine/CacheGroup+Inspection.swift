import HashTreeCollections

extension CacheGroup {
    /// Which entries ``entries(_:)`` returns. Every criterion that is set must hold.
    public struct EntryFilter: Sendable, Hashable {
        /// The kinds to return; `nil` means every kind.
        public var kinds: Set<CredentialKind>?
        /// Only entries of this client id (case-insensitive); accounts have no client and never match.
        public var clientId: String?
        /// Only entries of this user: a home account id or a username, case-insensitive.
        public var account: String?
        /// Only entries of the partition with this key (``CachePartition/isNamed(_:)``).
        public var partition: String?

        /// A filter with the given criteria; the default matches everything.
        public init(
            kinds: Set<CredentialKind>? = nil, clientId: String? = nil, account: String? = nil, partition: String? = nil
        ) {
            self.kinds = kinds
            self.clientId = clientId
            self.account = account
            self.partition = partition
        }
    }

    /// The group's entries that match `filter`, in MSAL document order by kind (access tokens,
    /// accounts, id tokens, refresh tokens, app metadata), then in the order they were written.
    ///
    /// With an ``EntryFilter/account`` the work is proportional to that user's entries; otherwise
    /// it is one pass over the group. Throws `.notFound` when `filter.account` matches no home
    /// account id and no username in the group.
    public func entries(_ filter: EntryFilter = EntryFilter()) throws -> [GroupEntry] {
        let index = try index()
        var candidates: [StoredEntry]
        if let account = filter.account {
            let homes = try Self.homeAccounts(matching: account, in: index)
            candidates = homes.flatMap { index.entries(account: $0) }
        } else {
            candidates = Array(index.entries.values)
        }
        let client = filter.clientId?.lowercased()
        candidates.removeAll { stored in
            if let kinds = filter.kinds, !kinds.contains(stored.id.kind) { return true }
            if let client, stored.entry.client != client { return true }
            if let partition = filter.partition, CachePartition(of: stored.entry)?.isNamed(partition) != true { return true }
            return false
        }
        candidates.sort { ($0.id.kind.creationOrder, $0.ordinal) < ($1.id.kind.creationOrder, $1.ordinal) }
        return Self.summaries(candidates, in: index)
    }

    /// The entry with this short ``GroupEntry/id`` (or a unique prefix of it, at least 6
    /// characters), or filed under this exact MSAL key; `nil` when there is none.
    ///
    /// A key is found in constant time; a short id costs one pass over the group. Throws
    /// `.invalidArgument` when a prefix matches more than one entry.
    public func entry(id: String) throws -> GroupEntry? {
        let index = try index()
        for kind in CredentialKind.allCases {
            if let stored = index[EntryID(kind: kind, key: id)] { return Self.summaries([stored], in: index).first }
        }
        let wanted = id.lowercased()
        guard wanted.count >= 6 else { return nil }
        var found: [StoredEntry] = []
        for stored in index.entries.values {
            let shortId = GroupEntry.id(kind: stored.id.kind, key: stored.id.key)
            if shortId == wanted { return Self.summaries([stored], in: index).first }
            if shortId.hasPrefix(wanted) { found.append(stored) }
        }
        guard found.count <= 1 else {
            throw TokenCacheError(
                .invalidArgument, "\(found.count) entries have an id starting with \"\(wanted)\"; give more of the id")
        }
        return Self.summaries(found, in: index).first
    }

    /// The home accounts (lower-cased) that `account` names: itself when the group has entries
    /// of that home account id, else the home accounts of the account entries with that
    /// username. Throws `.notFound` when there is none.
    static func homeAccounts(matching account: String, in index: Index) throws -> [String] {
        let wanted = account.lowercased()
        if !index.entries(account: wanted).isEmpty { return [wanted] }
        var homes: [String] = []
        for match in index.accounts(username: wanted) where !homes.contains(match.homeAccountId.normalised) {
            homes.append(match.homeAccountId.normalised)
        }
        guard !homes.isEmpty else {
            throw TokenCacheError(.notFound, "no account in the group has that home account id or username")
        }
        return homes
    }

    /// Summaries of `stored`, each with its user's name (looked up once per home account).
    static func summaries(_ stored: [StoredEntry], in index: Index) -> [GroupEntry] {
        var usernames: [String: String?] = [:]
        return stored.map { stored in
            if case .account(let account) = stored.entry {
                return GroupEntry(stored, username: account.username.isEmpty ? nil : account.username)
            }
            guard let home = stored.entry.homeAccount else { return GroupEntry(stored, username: nil) }
            let username: String?
            if let known = usernames[home] {
                username = known
            } else {
                let name = index.primaryAccount(home).map(\.username).flatMap { $0.isEmpty ? nil : $0 }
                usernames[home] = .some(name)
                username = name
            }
            return GroupEntry(stored, username: username)
        }
    }
}
