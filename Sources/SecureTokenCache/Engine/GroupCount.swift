/// Counts what a group holds (``CacheGroup/statistics()``), the same way from its index or from
/// the records an open read without filing them.
struct GroupCount {
    private var countByKind: [CredentialKind: Int] = [:]
    private var accounts = 0
    private var clients = Set<String>()
    private var expiredAccessTokens = 0

    /// The counts of `index`'s entries, access tokens expired at `now`.
    init(index: Index, now: Int64) {
        countByKind = index.countByKind.filter { $0.value > 0 }
        accounts = index.accountsByHome.count
        // From the members as held, in one pass: making every entry a typed one to read two
        // members would cost most of a large group's open again.
        var held = HeldCount(now: now)
        index.entries.forEachHeld { kind, members in held.add(kind, members) }
        clients = held.clients
        expiredAccessTokens = held.expiredAccessTokens
    }

    /// The counts of a store's `records`, as ``init(index:now:)`` counts the index they file into:
    /// in parts, as an open decodes them (``RecordCodec/inParts(of:_:)``).
    ///
    /// Each record is checked as filing checks it, so a damaged one throws the same error.
    /// Accounts and clients are read as filing reads them (the text of a string or a number,
    /// lower-cased), which is what the index's accounts by home account and each entry's
    /// client id say.
    init(records: [Record], now: Int64) throws {
        let parts = try RecordCodec.inParts(of: records) { range, parallel in
            try RecordsPart(records[range], now: now, parallel: parallel)
        }
        var homes = Set<String>()
        var clients = Set<String>()
        for part in parts {
            for (kind, count) in part.countByKind { countByKind[kind, default: 0] += count }
            homes.formUnion(part.homes)
            clients.formUnion(part.clients)
            expiredAccessTokens += part.expiredAccessTokens
        }
        accounts = homes.count
        self.clients = clients
    }

    /// The counts of a contiguous part of a store's records.
    private struct RecordsPart: Sendable {
        var countByKind: [CredentialKind: Int] = [:]
        /// The filing keys of the accounts' home account ids.
        var homes = Set<String>()
        var clients = Set<String>()
        var expiredAccessTokens = 0

        init(_ records: ArraySlice<Record>, now: Int64, parallel: Bool) throws {
            var decoder = EntryDecoder(parallel: parallel)
            // Interned slots, made into text once each: entries repeat a few clients and accounts.
            var homeSlots = Set<Int32>()
            var clientSlots = Set<Int32>()
            // By index: a record read as a whole is retained and released.
            for index in records.indices {
                guard let kind = RecordCodec.credentialKind(records[index].id.kind) else {
                    _ = try RecordCodec.decode(records[index], with: &decoder)
                    continue
                }
                let payload = records[index].payload
                let (_, slots) = try decoder.filingSlots(payload: payload)
                countByKind[kind, default: 0] += 1
                if kind == .account {
                    homeSlots.insert(slots[.account])
                    continue
                }
                clientSlots.insert(slots[.client])
                // As AccessToken reads it: a missing or unreadable expiry has expired.
                if kind == .accessToken, EntryPayload.value(.expiresOn, of: payload)?.integerValue ?? 0 <= now {
                    expiredAccessTokens += 1
                }
            }
            for slot in homeSlots {
                homes.insert((FilingPart.account.key(slot: slot, decoder: &decoder) ?? FilingPart.account.absentKey).value)
            }
            for slot in clientSlots { clients.insert(FilingPart.client.key(slot: slot, decoder: &decoder)?.value ?? "") }
        }
    }

    /// What the index's count reads from each entry's members as held.
    private struct HeldCount {
        let now: Int64
        var clients = Set<String>()
        var expiredAccessTokens = 0

        /// Counts the client and the expiry of an entry of `kind` with `members`.
        mutating func add(_ kind: CredentialKind, _ members: EntryMembers) {
            guard kind != .account else { return }
            clients.insert((members.string(.clientId) ?? "").asciiLowercased)
            // As AccessToken reads it: a missing or unreadable expiry has expired.
            if kind == .accessToken, members.value(.expiresOn)?.integerValue ?? 0 <= now { expiredAccessTokens += 1 }
        }
    }

    /// The counts, for a group at `generation`.
    func statistics(generation: UInt64) -> CacheGroup.Statistics {
        CacheGroup.Statistics(
            countByKind: countByKind, accounts: accounts, clients: clients.sorted(),
            expiredAccessTokens: expiredAccessTokens, generation: generation)
    }
}
