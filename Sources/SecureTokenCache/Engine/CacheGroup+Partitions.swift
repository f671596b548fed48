extension CacheGroup {
    /// One partition of a group (``CachePartition``) and what it holds.
    public struct PartitionSummary: Sendable, Hashable {
        /// The partition.
        public let partition: CachePartition
        /// How many entries it holds, of every kind.
        public let entryCount: Int
        /// How many of them are access tokens.
        public let accessTokenCount: Int
        /// How many of them are refresh tokens.
        public let refreshTokenCount: Int
        /// When its last access token expires, in Unix seconds; `nil` when it holds none.
        public let latestExpiry: Int64?

        /// Whether the partition still holds a token worth keeping at `now`: a refresh token,
        /// or an access token valid for 300 s more (MSAL.NET's `HasTokens`, by which
        /// Microsoft.Identity.Web deletes a distributed cache node).
        public func hasTokens(at now: Int64) -> Bool {
            refreshTokenCount > 0 || (latestExpiry.map { $0 > now + 300 } ?? false)
        }
    }

    /// The group's partitions, holder by holder (users, then apps, then on-behalf-of), each by
    /// key; app metadata, which belongs to no partition, is not counted. One pass over the group.
    public func partitions() throws -> [PartitionSummary] {
        struct Tally {
            var entries = 0, accessTokens = 0, refreshTokens = 0
            var latestExpiry: Int64?
        }
        var tallies: [CachePartition: Tally] = [:]
        for stored in try index().entries.values {
            guard let partition = CachePartition(of: stored.entry) else { continue }
            var tally = tallies[partition, default: Tally()]
            tally.entries += 1
            switch stored.entry {
            case .accessToken(let token):
                tally.accessTokens += 1
                tally.latestExpiry = max(tally.latestExpiry ?? .min, token.expiresOn)
            case .refreshToken:
                tally.refreshTokens += 1
            default:
                break
            }
            tallies[partition] = tally
        }
        let rank = { (holder: GroupEntry.Holder) in GroupEntry.Holder.allCases.firstIndex(of: holder) ?? 0 }
        return tallies.map { partition, tally in
            PartitionSummary(
                partition: partition, entryCount: tally.entries, accessTokenCount: tally.accessTokens,
                refreshTokenCount: tally.refreshTokens, latestExpiry: tally.latestExpiry)
        }.sorted {
            (rank($0.partition.holder), $0.partition.key) < (rank($1.partition.holder), $1.partition.key)
        }
    }
}
