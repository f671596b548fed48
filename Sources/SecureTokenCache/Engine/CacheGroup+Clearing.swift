import HashTreeCollections

extension CacheGroup {
    /// What ``clear(_:)`` removes.
    public enum ClearSelection: Sendable, Hashable {
        /// Every entry and every client's sign-in state. Top-level sections other SDKs added
        /// that hold no entries are kept.
        case all
        /// Everything of a user, for every client (a "wipe"): named by home account id or
        /// username, case-insensitive. A username shared by several home accounts (several
        /// clouds) selects all of them.
        case account(String)
        /// Every entry of a client id (case-insensitive): its access, refresh and id tokens (a
        /// family refresh token it obtained too) and its app metadata, and its sign-in state.
        case client(String)
        /// Every access token already expired (no margin).
        case expiredAccessTokens
        /// Every access token of `holder` (app-only or on-behalf-of), of one client id when
        /// `clientId` is given (case-insensitive). A user's tokens are cleared by account.
        case accessTokens(of: GroupEntry.Holder, clientId: String?)
        /// Every entry of the partition with this key (``CachePartition/isNamed(_:)``): an app's
        /// tokens in one tenant, the tokens redeemed from one user assertion, or everything of
        /// one home account (then, as for ``account(_:)``, every client forgets the user).
        case partition(String)
    }

    /// What ``clear(_:)`` would remove now, in ``entries(_:)``'s order: for a preview or a dry
    /// run. Nothing is changed.
    ///
    /// Throws `.notFound` when an account or client selection names nothing in the group.
    public func entriesToClear(_ selection: ClearSelection) throws -> [GroupEntry] {
        try keepPartitions(of: selection)
        let index = try index()
        return Self.summaries(try Self.doomed(selection, in: index, now: clock()), in: index)
    }

    /// Removes what `selection` names in one transaction (all or nothing) and returns what it
    /// removed, which may differ from an earlier ``entriesToClear(_:)`` if another process wrote
    /// in between.
    ///
    /// In a group that keeps only part of itself in memory (a database group with a
    /// ``CacheConfiguration/memoryLimit``), an account (by home account id) or a partition is
    /// loaded first, and selections that span the whole group are refused: open the group
    /// without a limit (as `cachetool` does) to clear those.
    ///
    /// Throws `.notFound` when an account or client selection names nothing in the group (then
    /// nothing is changed), `.invalidArgument` for a selection of the whole group where only part
    /// is kept, and the store's errors (`.lockTimeout`, `.ioFailure`, ...).
    @discardableResult
    public func clear(_ selection: ClearSelection) throws -> [GroupEntry] {
        try keepPartitions(of: selection)
        return try write { transaction in
            let index = transaction.index
            let doomed = try Self.doomed(selection, in: index, now: clock())
            // Summarise before deleting: usernames come from account entries that may go too.
            let removed = Self.summaries(doomed, in: index)
            for stored in doomed { transaction.delete(stored.id) }
            switch selection {
            case .all:
                for client in index.clientStates.keys {
                    transaction.updateClientState(client) { $0 = ClientState() }
                }
            case .account(let account):
                for home in try Self.homeAccounts(matching: account, in: index) {
                    for client in index.clientStates.keys {
                        transaction.updateClientState(client) { $0.forget(home) }
                    }
                }
            case .client(let client):
                transaction.updateClientState(client.lowercased()) { $0 = ClientState() }
            case .partition:
                let users = removed.filter { $0.partition?.holder == .user }
                for home in Set(users.compactMap { $0.homeAccountId?.normalised }) {
                    for client in index.clientStates.keys {
                        transaction.updateClientState(client) { $0.forget(home) }
                    }
                }
            case .expiredAccessTokens, .accessTokens:
                break
            }
            return removed
        }
    }

    /// The entries `selection` names, in ``entries(_:)``'s order.
    static func doomed(_ selection: ClearSelection, in index: Index, now: Int64) throws -> [StoredEntry] {
        var doomed: [StoredEntry]
        switch selection {
        case .all:
            doomed = Array(index.entries.values)
        case .account(let account):
            doomed = try homeAccounts(matching: account, in: index).flatMap { index.entries(account: $0) }
        case .client(let clientId):
            let client = clientId.lowercased()
            doomed = index.entries.values.filter { $0.entry.client == client }
            guard !doomed.isEmpty || index.clientStates[client] != nil else {
                throw TokenCacheError(.notFound, "the group has no entry of that client id")
            }
        case .expiredAccessTokens:
            doomed = index.expiredAccessTokens(now: now).compactMap { index[$0] }
        case .accessTokens(let holder, let clientId):
            guard holder != .user else {
                throw TokenCacheError(
                    .invalidArgument, "a user's tokens are cleared by account (clear(.account(...))) or by client")
            }
            let client = clientId?.lowercased()
            doomed = index.entries.values.filter { stored in
                guard case .accessToken(let token) = stored.entry, client == nil || token.clientId.lowercased() == client
                else { return false }
                return holder == .onBehalfOf ? token.assertionKey != nil : token.assertionKey == nil && token.homeAccountId == nil
            }
        case .partition(let key):
            doomed = index.entries.values.filter { CachePartition(of: $0.entry)?.isNamed(key) == true }
            guard !doomed.isEmpty else { throw TokenCacheError(.notFound, "the group has no partition with that key") }
        }
        doomed.sort { ($0.id.kind.creationOrder, $0.ordinal) < ($1.id.kind.creationOrder, $1.ordinal) }
        return doomed
    }
}

extension CacheGroup {
    /// Loads what `selection` names when the group keeps only part of itself in memory, so that
    /// clearing it clears it in the store; refuses a selection that spans the whole group there.
    func keepPartitions(of selection: ClearSelection) throws {
        guard partial != nil else { return }
        switch selection {
        case .account(let account):
            // A home account id names its partition; a username names none that can be found
            // without loading every partition, so only the users kept match it.
            try keep(.user(HomeAccountId(account)), evenIfEmpty: false)
        case .partition(let key):
            for partition in CachePartition.candidates(named: key) { try keep(partition, evenIfEmpty: false) }
        case .all, .client, .expiredAccessTokens, .accessTokens:
            throw TokenCacheError(
                .invalidArgument,
                "this instance keeps only part of group \(name) in memory (a memory limit): clearing \(selection) needs the "
                    + "whole group; open it without a memory limit, as cachetool does, or clear by account or partition")
        }
    }
}
