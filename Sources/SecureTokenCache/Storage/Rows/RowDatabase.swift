/// A database that keeps each group as one sealed row per record, plus one head row per group:
/// what ``RowStore`` needs from a database client. The PostgreSQL client lives in the
/// `SecureTokenCachePostgres` module, so that an app that does not use it never builds SwiftNIO.
///
/// The database sees only opaque bytes: a group's id (a hash of its name), each row's keyed
/// name, sealed bytes and version. ``RowStore`` seals, names and opens; the database stores,
/// serialises and announces.
///
/// What a database guarantees:
/// - Each call is bounded by the database's own timeout and then throws
///   ``TokenCacheError/Code/databaseUnavailable``; a refusal (credentials, permissions, a
///   missing table) is ``TokenCacheError/Code/databaseFailure``; a schema written by a newer
///   version of the library is ``TokenCacheError/Code/unsupportedFormat``.
/// - ``commit(_:epoch:after:_:)`` is one database transaction holding the group's head row
///   locked: every process's commits to a group are serialised, and a commit that throws writes
///   nothing.
/// - After a commit, every process that ``listen(_:)``s hears the group's new generation; after
///   it may have missed some (a reconnect), it is told so.
package protocol RowDatabase: AnyObject, Sendable {
    /// Where the database is, for descriptions and messages: host, port and database name, never
    /// a password.
    var location: String { get }

    /// The head of group `group`, or `nil` when the database has no such group.
    func head(of group: [UInt8]) throws -> RowGroupHead?

    /// Creates group `group` with `header` and `epoch` unless it exists, and returns the group's
    /// head either way (the existing one when another process created it first).
    func createGroup(_ group: [UInt8], header: [UInt8], epoch: UInt64) throws -> RowGroupHead

    /// The group's head and, read in the same snapshot, the rows `selection` names: its rows
    /// written after `version` in version order (deletions included) and the live rows of the
    /// partitions it loads; or, when the group's epoch is not `epoch`, `version` is 0, or
    /// `version` is behind the group's horizon (the deletions it would need were swept), every
    /// live row of the partitions it keeps.
    func rows(of group: [UInt8], epoch: UInt64, after version: UInt64, selection: RowSelection) throws
        -> (RowGroupHead, [SealedRow])

    /// One transaction on group `group`: locks its head, hands `body` the head and the rows
    /// ``rows(of:epoch:after:selection:)`` would return, writes the rows `body` returns (each at
    /// version `head.generation + 1`, with their partitions' last write), sweeps the deletion rows
    /// and forgets the partitions it names, moves the generation one step and announces it with
    /// the partitions it touched. When `body` returns no rows and forgets no partition, nothing
    /// is written. Returns the head after the transaction.
    func commit(
        _ group: [UInt8], epoch: UInt64, after version: UInt64, selection: RowSelection,
        _ body: (RowGroupHead, [SealedRow]) throws -> RowCommit
    ) throws -> RowGroupHead

    /// Writes `rows`, as ``commit(_:epoch:after:selection:_:)`` would, at version `version + 1`,
    /// only if the group is still at generation `version` in epoch `epoch`: one round trip, with
    /// no lock held between a read and the write. Returns the head after it, or `nil` when
    /// another commit came first (then nothing was written). The horizon stays as it is.
    func commit(_ group: [UInt8], epoch: UInt64, ifStillAt version: UInt64, rows: [SealedRow]) throws -> RowGroupHead?

    /// What a sweep may delete, read in one snapshot: the group's live rows that expired before
    /// `now` and the live rows of the partitions last written before `idleBefore` (`nil`: none),
    /// at most `limit` rows in all, and those partitions; with the generation they were read at.
    func sweepCandidates(of group: [UInt8], expiredBefore now: Int64, idleBefore: Int64?, limit: Int) throws
        -> RowSweepCandidates

    /// Takes the database-wide lock `id`, which every process of the database sees, waiting at
    /// most `timeout` for another holder; returns what gives it back (call it once). The lock
    /// holds a connection until then: hold it for a token request, not longer.
    ///
    /// - Throws: ``TokenCacheError/Code/lockTimeout`` when another process held it past
    ///   `timeout`; ``TokenCacheError/Code/databaseUnavailable`` when the database did not answer.
    func lock(_ id: Int64, timeout: Duration) async throws -> @Sendable () async -> Void

    /// Calls `handler` with each announcement the database hears, from any process (this one
    /// included), until the process ends. Called once per database. The handler may run on a
    /// thread the database's own calls wait for, so it must not call the database itself.
    func listen(_ handler: @escaping @Sendable (RowAnnouncement) -> Void)
}

/// A group's head row: what identifies the group and where its history is.
package struct RowGroupHead: Sendable, Equatable {
    /// The group's header: its key source and key check (``GroupHeader``), never a secret.
    package var header: [UInt8]
    /// Chosen at random when the group is created: a cursor from another epoch reloads.
    package var epoch: UInt64
    /// The number of commits the group has had.
    package var generation: UInt64
    /// The deletion rows of this version and older were swept: a reader behind it reloads.
    package var horizon: UInt64

    /// A head with these parts.
    package init(header: [UInt8], epoch: UInt64, generation: UInt64, horizon: UInt64 = 0) {
        self.header = header
        self.epoch = epoch
        self.generation = generation
        self.horizon = horizon
    }
}

/// What one commit writes.
package struct RowCommit: Sendable {
    /// The rows, each at the commit's version.
    package var rows: [SealedRow]
    /// When not `nil`, the deletion rows of this version and older are deleted and the group's
    /// horizon moves there, in the same transaction.
    package var sweepingDeletionsThrough: UInt64?
    /// Idle partitions a sweep emptied: their last-write records go.
    package var forgetting: [[UInt8]]

    /// A commit of these parts.
    package init(rows: [SealedRow], sweepingDeletionsThrough: UInt64? = nil, forgetting: [[UInt8]] = []) {
        self.rows = rows
        self.sweepingDeletionsThrough = sweepingDeletionsThrough
        self.forgetting = forgetting
    }
}

/// Which rows a read hands back besides the changes after a version (``RowDatabase/rows(of:epoch:after:selection:)``).
package struct RowSelection: Sendable {
    /// The partitions the reader keeps in memory (besides the rows of no partition), by keyed
    /// name; `nil` when it keeps the whole group. Asked for only by a read that hands back every
    /// live row (a reader that starts over): an instance may keep many partitions, and listing
    /// them would cost every catch-up and partition load.
    package var kept: (@Sendable () -> [[UInt8]])?
    /// Partitions the reader starts keeping: their live rows are handed back whatever their
    /// version.
    package var loading: [[UInt8]]
    /// Whether the reader heard of a commit past the version it reads after. When it did not, a
    /// database may read the partitions it loads first, and what changed since only if the head
    /// shows something did: a hint of what is cheaper, never of what is read.
    package var heardOfChanges: Bool

    /// The whole group.
    package static let wholeGroup = RowSelection(kept: nil, loading: [])

    /// A selection of these parts.
    package init(kept: (@Sendable () -> [[UInt8]])?, loading: [[UInt8]] = [], heardOfChanges: Bool = true) {
        self.kept = kept
        self.loading = loading
        self.heardOfChanges = heardOfChanges
    }
}

/// What ``RowDatabase/sweepCandidates(of:expiredBefore:idleBefore:limit:)`` found.
package struct RowSweepCandidates: Sendable {
    /// The group's epoch when the candidates were read.
    package var epoch: UInt64
    /// The group's generation when the candidates were read.
    package var generation: UInt64
    /// Live rows whose expiry passed, and live rows of idle partitions.
    package var rows: [SealedRow]
    /// The idle partitions whose rows are among ``rows`` (all of them).
    package var idlePartitions: [[UInt8]]

    /// Candidates of these parts.
    package init(epoch: UInt64, generation: UInt64, rows: [SealedRow], idlePartitions: [[UInt8]]) {
        self.epoch = epoch
        self.generation = generation
        self.rows = rows
        self.idlePartitions = idlePartitions
    }
}

/// One record of a group as the database keeps it.
package struct SealedRow: Sendable, Equatable {
    /// The record's keyed name (``RecordSealer/keyedName(of:)``): unique in the group.
    package var name: [UInt8]
    /// The generation of the commit that wrote the row.
    package var version: UInt64
    /// Whether the record was deleted (the row stays, so readers behind can replay the deletion).
    package var isDeletion: Bool
    /// The record sealed as a batch of one whose sequence number is ``version``.
    package var sealed: [UInt8]
    /// The keyed name of the record's partition (``RecordSealer/keyedPartition(_:)``); `nil` for a
    /// record of no partition, which every reader keeps. A deletion row keeps its record's.
    package var partition: [UInt8]?
    /// When the record expires (an access token), in Unix seconds; `nil` for never.
    package var expiresAt: Int64?

    /// A row with these parts.
    package init(
        name: [UInt8], version: UInt64, isDeletion: Bool, sealed: [UInt8], partition: [UInt8]? = nil, expiresAt: Int64? = nil
    ) {
        self.name = name
        self.version = version
        self.isDeletion = isDeletion
        self.sealed = sealed
        self.partition = partition
        self.expiresAt = expiresAt
    }
}

/// What a database tells its listeners.
package enum RowAnnouncement: Sendable {
    /// Group `group` committed; its generation is now `generation`. The commit touched the rows of
    /// `partitions` only, by keyed name; `nil` when it touched rows of no partition (which every
    /// reader keeps) or more partitions than an announcement names.
    case committed(group: [UInt8], generation: UInt64, partitions: [[UInt8]]?)
    /// Announcements may have been missed (the listening connection was lost and is back): every
    /// group must ask the database for its generation again.
    case resynchronise
}
