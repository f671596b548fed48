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

    /// The group's head and, read in the same snapshot, its rows written after `version` in
    /// version order (deletions included), or every live row when the group's epoch is not
    /// `epoch`, `version` is 0, or `version` is behind the group's horizon (the deletions it
    /// would need were swept).
    func rows(of group: [UInt8], epoch: UInt64, after version: UInt64) throws -> (RowGroupHead, [SealedRow])

    /// One transaction on group `group`: locks its head, hands `body` the head and the rows
    /// ``rows(of:epoch:after:)`` would return, writes the rows `body` returns (each at version
    /// `head.generation + 1`), sweeps the deletion rows it names, moves the generation one step
    /// and announces it. When `body` returns no rows, nothing is written. Returns the head after
    /// the transaction.
    func commit(
        _ group: [UInt8], epoch: UInt64, after version: UInt64,
        _ body: (RowGroupHead, [SealedRow]) throws -> RowCommit
    ) throws -> RowGroupHead

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

    /// A commit of these parts.
    package init(rows: [SealedRow], sweepingDeletionsThrough: UInt64? = nil) {
        self.rows = rows
        self.sweepingDeletionsThrough = sweepingDeletionsThrough
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

    /// A row with these parts.
    package init(name: [UInt8], version: UInt64, isDeletion: Bool, sealed: [UInt8]) {
        self.name = name
        self.version = version
        self.isDeletion = isDeletion
        self.sealed = sealed
    }
}

/// What a database tells its listeners.
package enum RowAnnouncement: Sendable {
    /// Group `group` committed; its generation is now `generation`.
    case committed(group: [UInt8], generation: UInt64)
    /// Announcements may have been missed (the listening connection was lost and is back): every
    /// group must ask the database for its generation again.
    case resynchronise
}
