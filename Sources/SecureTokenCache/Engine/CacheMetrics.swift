import CoreMetrics

/// What a group counts through swift-metrics, for a server's dashboards: answers from the cache,
/// misses, token requests and evictions. Every counter has the dimension `group` (the group's
/// name); those of acquisitions also `kind` (`app` or `obo`). Nothing counted names a user or a
/// token.
///
/// Counters are made when the group is opened, from the factory bootstrapped then: bootstrap
/// `MetricsSystem` before opening groups.
struct CacheMetrics: Sendable {
    /// The counters of one kind of acquisition.
    struct Acquisitions: Sendable {
        /// Served from the cache.
        let hits: Counter
        /// Not in the cache, or expired: the caller waited for a token request.
        let misses: Counter
        /// Sent to the authority (a miss's request, shared by the callers who missed together,
        /// or a renewal past `refresh_on`).
        let tokenRequests: Counter

        init(kind: String, group: String) {
            let dimensions = [("group", group), ("kind", kind)]
            hits = Counter(label: "securetokencache_cache_hits", dimensions: dimensions)
            misses = Counter(label: "securetokencache_cache_misses", dimensions: dimensions)
            tokenRequests = Counter(label: "securetokencache_token_requests", dimensions: dimensions)
        }
    }

    /// App-only token acquisitions.
    let app: Acquisitions
    /// On-behalf-of token acquisitions.
    let onBehalfOf: Acquisitions
    /// Entries evicted by the group's ``CacheConfiguration/memoryLimit``.
    let evictions: Counter

    init(group: String) {
        app = Acquisitions(kind: "app", group: group)
        onBehalfOf = Acquisitions(kind: "obo", group: group)
        evictions = Counter(label: "securetokencache_evictions", dimensions: [("group", group)])
    }
}
