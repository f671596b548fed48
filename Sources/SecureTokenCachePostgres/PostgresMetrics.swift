import CoreMetrics

/// What the PostgreSQL store counts through swift-metrics, for a fleet's dashboards. Every metric
/// has the dimension `database` (host, port and database name: never a role or a password).
///
/// Metrics are made when the process first opens a group in the database, from the factory
/// bootstrapped then: bootstrap `MetricsSystem` before opening groups.
struct PostgresMetrics: Sendable {
    /// Each call to the database (a read, a commit, a lock): how long it took, failures included.
    let roundTrips: Timer
    /// Commits of this process.
    let commits: Counter
    /// Writes that found another instance's commit first and ran again after it.
    let conflicts: Counter
    /// Commits of any instance this process heard of (`NOTIFY`), its own included.
    let notifications: Counter
    /// Times the listening connection was lost and is being made again.
    let reconnects: Counter
    /// Calls that failed because the database was down, slow or unreachable
    /// (``TokenCacheError/Code/databaseUnavailable``).
    let outages: Counter

    init(database: String) {
        let dimensions = [("database", database)]
        roundTrips = Timer(label: "securetokencache_database_round_trips", dimensions: dimensions)
        commits = Counter(label: "securetokencache_database_commits", dimensions: dimensions)
        conflicts = Counter(label: "securetokencache_database_conflicts", dimensions: dimensions)
        notifications = Counter(label: "securetokencache_database_notifications", dimensions: dimensions)
        reconnects = Counter(label: "securetokencache_database_reconnects", dimensions: dimensions)
        outages = Counter(label: "securetokencache_database_outages", dimensions: dimensions)
    }
}
