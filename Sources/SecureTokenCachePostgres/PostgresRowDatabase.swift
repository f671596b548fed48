import CoreMetrics
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import SecureTokenCache
import Synchronization
import _ConnectionPoolModule

/// The row database (``RowDatabase``) in PostgreSQL, through postgres-nio's `PostgresClient`:
/// its pool for reads and transactions, and one connection of its own that `LISTEN`s for the
/// commits of every instance.
///
/// One per server, database and role in a process (``shared(_:logger:)``), whatever the number
/// of groups: a group is a few rows, not a connection.
final class PostgresRowDatabase: RowDatabase {
    /// The channel every commit notifies (``announcement(_:)``).
    static let channel = "stc_commits"

    let location: String
    private let configuration: PostgresStoreConfiguration
    private let client: PostgresClient
    /// The connections locks may hold (``LockSlots``).
    private let lockSlots: LockSlots
    /// The process's one database thread (``DatabaseThread/process``).
    private var thread: DatabaseThread { .process }
    private let logger: Logger
    private let metrics: PostgresMetrics
    /// Set while the database is known not to answer: calls fail at once instead of each waiting
    /// out the timeout, until `retryAt`, when one call tries again (the next wait doubling up to
    /// ``OutageBackoff/longest``). A call that succeeds, or the listener connecting again, ends it.
    private let outage = Mutex<Outage?>(nil)

    private struct Outage {
        var since: ContinuousClock.Instant
        var retryAt: ContinuousClock.Instant
        var wait: Duration
    }

    /// The connections kept open whether used or not: as many as the calls of one instance that
    /// usually run at once.
    static let steadyConnections = 2

    /// How long calls fail at once after the database did not answer: the first wait, doubled
    /// after each attempt that fails again, up to the longest.
    enum OutageBackoff {
        static let first: Duration = .milliseconds(250)
        static let longest: Duration = .seconds(5)
    }

    private init(_ configuration: PostgresStoreConfiguration, creatingTables: Bool, logger: Logger) throws {
        self.configuration = configuration
        location = configuration.description
        self.logger = logger
        metrics = PostgresMetrics(database: configuration.place)
        var options = PostgresClient.Configuration.Options()
        options.maximumConnections = max(2, configuration.maximumConnections)
        lockSlots = LockSlots(options.maximumConnections - 1)
        options.connectTimeout = configuration.timeout
        // The pool arms a keep-alive timer each time a connection goes back to it, and an idle
        // timer for a connection beyond its minimum; a lease cancels them, but each sleep stays
        // allocated until its deadline (30 and 60 s), so an instance loading partitions quickly
        // would hold memory in proportion to its rate. The connections a steady load uses are the
        // minimum ones, which have no idle timer, and none has a keep-alive timer: a connection
        // the server closed is dropped by the pool as the listener's is.
        options.keepAliveBehavior = nil
        options.minimumConnections = min(Self.steadyConnections, options.maximumConnections - 1)
        // Every statement runs on a plan made once per connection (generic), not planned again
        // for each call's values: planning the read of a partition load took longer than running
        // it. A generic plan cannot see how few rows a version range selects, so every range on
        // versions is bounded on both sides (PostgreSQL then estimates a narrow range and uses the
        // index); a plan's estimates would otherwise have it compile the plan (JIT), which only
        // long queries repay, so JIT is off too.
        options.additionalStartupParameters = [("jit", "off"), ("plan_cache_mode", "force_generic_plan")]
        var clientConfiguration = try Self.clientConfiguration(configuration)
        clientConfiguration.options = options
        let client = PostgresClient(configuration: clientConfiguration, backgroundLogger: logger)
        self.client = client
        // First one connection of its own, which reports a refused login or a missing database
        // at once (the pool would retry it quietly until the timeout), and checks the tables.
        let connectionConfiguration = try Self.connectionConfiguration(configuration)
        try thread.wait(timeout: configuration.timeout, "connecting and checking the token cache tables") {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: connectionConfiguration, id: 0, logger: logger)
                do {
                    try await connection.withTransaction(logger: logger) { connection in
                        try await PostgresSchema.prepare(connection, creating: creatingTables, logger: logger)
                    }
                    try? await connection.close()
                } catch {
                    try? await connection.close()
                    throw error
                }
            } catch {
                throw Self.translate(error)
            }
        }
        _ = Task(executorPreference: thread) { await client.run() }
    }

    /// The process's database for `configuration`, connected and with its tables checked on
    /// first use; created or upgraded too unless `creatingTables` is false (then a database
    /// without them is ``TokenCacheError/Code/notFound``).
    static func shared(_ configuration: PostgresStoreConfiguration, creatingTables: Bool = true, logger: Logger) throws
        -> PostgresRowDatabase
    {
        try opened.withLock { opened in
            if let database = opened[configuration] ?? (creatingTables ? nil : openedReadOnly.withLock({ $0[configuration] })) {
                return database
            }
            let database = try PostgresRowDatabase(configuration, creatingTables: creatingTables, logger: logger)
            if creatingTables {
                opened[configuration] = database
            } else {
                openedReadOnly.withLock { $0[configuration] = database }
            }
            return database
        }
    }

    private static let opened = Mutex<[PostgresStoreConfiguration: PostgresRowDatabase]>([:])
    /// Databases opened without creating their tables: a later open that may create them checks
    /// again.
    private static let openedReadOnly = Mutex<[PostgresStoreConfiguration: PostgresRowDatabase]>([:])

    // MARK: RowDatabase

    func head(of group: [UInt8]) throws -> RowGroupHead? {
        try call("reading a group's head") { connection, logger in
            try await Self.head(of: group, in: connection.query(Self.headQuery(group, locking: false), logger: logger))
        }
    }

    func createGroup(_ group: [UInt8], header: [UInt8], epoch: UInt64) throws -> RowGroupHead {
        try call("creating a group") { connection, logger in
            try await connection.query(
                """
                INSERT INTO stc_groups (id, header, epoch) VALUES (\(ByteBuffer(bytes: group)), \(ByteBuffer(bytes: header)), \(Int64(bitPattern: epoch)))
                ON CONFLICT (id) DO NOTHING
                """, logger: logger)
            guard
                let head = try await Self.head(
                    of: group, in: connection.query(Self.headQuery(group, locking: false), logger: logger))
            else {
                throw TokenCacheError(.databaseFailure, "a group just created is not in stc_groups; check the table")
            }
            return head
        }
    }

    func rows(of group: [UInt8], epoch: UInt64, after version: UInt64, selection: RowSelection) throws
        -> (RowGroupHead, [SealedRow])
    {
        try call("reading a group's rows") { connection, logger in
            if version > 0 {
                // A catch-up or a partition load: one prepared statement, one round trip. What it
                // read is the answer unless the head says the reader starts over (another epoch,
                // or deletions it would replay were swept).
                let statement = GroupChangesStatement(group: group, version: version, loading: selection.loading)
                if !selection.heardOfChanges, selection.loading.count == 1 {
                    // A lookup's load by a reader up to date, as most are: the partition's rows
                    // alone are the answer while the head has not moved, and a commit announced
                    // meanwhile costs a second round trip.
                    let (head, rows) = try await statement.runLoadingOnly(on: connection, logger: logger)
                    guard let head else { throw Self.headGone }
                    if head.epoch == epoch, version >= head.horizon, head.generation == version { return (head, rows) }
                }
                let (head, rows) = try await statement.run(on: connection, logger: logger)
                guard let head else { throw Self.headGone }
                if head.epoch == epoch, version >= head.horizon { return (head, rows) }
            }
            // One snapshot for the head and the rows: a commit between the two reads would hand
            // the reader rows newer than the head it reports.
            try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            do {
                let result = try await Self.rows(
                    of: group, epoch: epoch, after: version, selection: selection, on: connection, locking: false,
                    logger: logger)
                try await connection.query("COMMIT", logger: logger)
                return result
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    func sweepCandidates(of group: [UInt8], expiredBefore now: Int64, idleBefore: Int64?, limit: Int) throws
        -> RowSweepCandidates
    {
        try call("finding what a sweep deletes") { connection, logger in
            try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            do {
                let id = ByteBuffer(bytes: group)
                guard
                    let head = try await Self.head(
                        of: group, in: connection.query(Self.headQuery(group, locking: false), logger: logger))
                else { throw Self.headGone }
                var rows = try await Self.decodeRows(
                    connection.query(
                        """
                        SELECT name, version, deleted, sealed, part FROM stc_rows
                        WHERE group_id = \(id) AND NOT deleted AND expires_at < \(now) ORDER BY expires_at LIMIT \(limit)
                        """, logger: logger))
                var idle: [[UInt8]] = []
                if let idleBefore, rows.count < limit {
                    for try await part in try await connection.query(
                        """
                        SELECT part FROM stc_parts WHERE group_id = \(id) AND written_at < \(idleBefore)
                        ORDER BY written_at LIMIT \(max(1, (limit - rows.count) / 4))
                        """, logger: logger
                    ).decode(ByteBuffer.self) {
                        idle.append(Array(part.readableBytesView))
                    }
                    if !idle.isEmpty {
                        let expired = Set(rows.map(\.name))
                        let parts = idle.map { ByteBuffer(bytes: $0) }
                        rows += try await Self.decodeRows(
                            connection.query(
                                """
                                SELECT name, version, deleted, sealed, part FROM stc_rows
                                WHERE group_id = \(id) AND NOT deleted AND part = ANY(\(parts))
                                """, logger: logger)
                        ).filter { !expired.contains($0.name) }
                    }
                }
                try await connection.query("COMMIT", logger: logger)
                return RowSweepCandidates(epoch: head.epoch, generation: head.generation, rows: rows, idlePartitions: idle)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    func commit(
        _ group: [UInt8], epoch: UInt64, after version: UInt64, selection: RowSelection,
        _ body: (RowGroupHead, [SealedRow]) throws -> RowCommit
    ) throws -> RowGroupHead {
        try failIfKnownUnavailable(while: "committing a write")
        // The body runs here, on the caller's thread, between the transaction's read and its
        // writes: the transaction waits for it (``CommitExchange``).
        let exchange = CommitExchange()
        let timeout = configuration.timeout
        let task = Task(executorPreference: thread) { [client, logger, metrics] in
            let outcome = await DatabaseThread.result {
                try await Self.leased(from: client) { connection in
                    try await connection.withTransaction(logger: logger) { connection -> RowGroupHead in
                        let (head, rows) = try await Self.lockedRows(
                            of: group, epoch: epoch, after: version, selection: selection, on: connection, metrics: metrics,
                            logger: logger)
                        guard let commit = await exchange.offer(head, rows), !commit.rows.isEmpty || !commit.forgetting.isEmpty
                        else {
                            throw CommitExchange.NothingToWrite(head: head)
                        }
                        return try await Self.write(commit, to: group, after: head, on: connection, logger: logger)
                    }
                }
            }
            switch outcome {
            case .failure(let error as PostgresTransactionError):
                // Nothing was written, so a rollback that failed (the connection lost) lost nothing.
                if let nothing = error.closureError as? CommitExchange.NothingToWrite {
                    exchange.finish(.success(nothing.head))
                } else {
                    exchange.finish(.failure(error))
                }
            case .failure(let error): exchange.finish(.failure(error))
            case .success(let head): exchange.finish(.success(head))
            }
        }
        let started = ContinuousClock.now
        defer { metrics.roundTrips.recordNanoseconds((ContinuousClock.now - started).nanoseconds) }
        let reading: (RowGroupHead, [SealedRow])?
        do {
            reading = try exchange.waitForOffer(timeout: timeout, cancelling: task)
        } catch let error as TokenCacheError {
            throw report(error, while: "locking a group for a write")
        }
        guard let (head, rows) = reading else {
            return try exchange.result().mapError { report(Self.translate($0), while: "locking a group for a write") }.get()
        }
        let waitedForOffer = ContinuousClock.now - started
        let writes: RowCommit
        do {
            writes = try body(head, rows)
        } catch {
            exchange.answer(nil)
            throw error
        }
        exchange.answer(writes)
        let after: RowGroupHead
        do {
            // One call, one timeout: what the read took is not given again to the write (the body,
            // this process's own work, is not counted).
            let left = max(timeout - waitedForOffer, .milliseconds(1))
            after = try exchange.waitForResult(timeout: left, cancelling: task).mapError(Self.translate).get()
        } catch let error as TokenCacheError {
            throw report(error, while: "committing a write")
        }
        answered()
        if after.generation != head.generation { metrics.commits.increment() }
        return after
    }

    func commit(_ group: [UInt8], epoch: UInt64, ifStillAt version: UInt64, rows: [SealedRow]) throws -> RowGroupHead? {
        let statement = CommitRowsStatement.IfStillAt(
            commit: Self.commitStatement(rows, to: group, version: version + 1, horizon: 0), epoch: epoch)
        let head = try call("committing a write") { connection, logger -> RowGroupHead? in
            var head: RowGroupHead? = nil
            for try await (header, epoch, generation, horizon) in try await connection.execute(statement, logger: logger) {
                head = try RowGroupHead(columns: (header, epoch, generation, horizon))
            }
            return head
        }
        if head == nil {
            metrics.conflicts.increment()
            logger.debug("another commit came first; the write runs again after it")
        } else {
            metrics.commits.increment()
        }
        return head
    }

    func lock(_ id: Int64, timeout wholeTimeout: Duration) async throws -> @Sendable () async -> Void {
        try failIfKnownUnavailable(while: "taking a lock")
        let started = ContinuousClock.now
        guard await lockSlots.take(within: wholeTimeout) else {
            throw TokenCacheError(
                .lockTimeout,
                "this process's other locks held the connections locks may use (all but one of maximumConnections) for \(wholeTimeout); retry, or allow more connections"
            )
        }
        // What waiting for the slot took is not given again to waiting for the lock.
        let timeout = max(wholeTimeout - (ContinuousClock.now - started), .milliseconds(1))
        // A session lock on a connection of the pool, kept out of the pool until the release:
        // the task below holds both, and the caller's body runs in the caller's own context.
        let acquired = OneShot<Result<Void, TokenCacheError>>()
        let released = OneShot<Void>()
        let milliseconds = max(1, Int(timeout.nanoseconds / 1_000_000))
        let unlockTimeout = configuration.timeout
        let locking = Task(executorPreference: thread) { [client, logger, lockSlots] in
            // Once the connection is back in the pool.
            defer { lockSlots.give() }
            do {
                try await Self.leased(from: client) { connection in
                    // lock_timeout bounds the wait for another holder; SET takes no parameter.
                    try await connection.query(PostgresQuery(unsafeSQL: "SET lock_timeout = \(milliseconds)"), logger: logger)
                    do {
                        try await connection.query("SELECT pg_advisory_lock(\(id))", logger: logger)
                    } catch {
                        _ = try? await connection.query("RESET lock_timeout", logger: logger)
                        throw error
                    }
                    acquired.fulfil(.success(()))
                    await released.value()
                    // Given back by queries like any other, which a connection dropped without a
                    // word never answers: past the timeout the connection is closed (the server
                    // then frees the lock with the session), and goes back to the pool closed.
                    let watchdog = Task {
                        try? await Task.sleep(for: unlockTimeout)
                        // Waited for, as below: the pool must know it closed before it has it back.
                        if !Task.isCancelled { try? await connection.close().get() }
                    }
                    // One statement, as RESET would be a second: a query on a connection the
                    // watchdog closed may never end either.
                    _ = try? await connection.query(
                        """
                        SELECT pg_advisory_unlock(\(id)), set_config('lock_timeout', reset_val, false)
                        FROM pg_settings WHERE name = 'lock_timeout'
                        """, logger: logger)
                    watchdog.cancel()
                    await watchdog.value
                }
            } catch {
                acquired.fulfil(.failure(Self.translate(error)))
            }
        }
        // The database may not answer at all (down, no free connection): never wait past the
        // timeout and a margin for the database to say so itself.
        let deadline = Task {
            try? await Task.sleep(for: timeout + configuration.timeout)
            if acquired.fulfil(
                .failure(
                    TokenCacheError(
                        .databaseUnavailable,
                        "the database did not grant a lock within \(timeout + configuration.timeout); check that it is running, then retry"
                    )))
            {
                // The query may never be answered (a connection dropped without a word): the
                // connection is closed, its session and any lock it got with it.
                locking.cancel()
                released.fulfil(())  // if the lock came meanwhile, it is given back at once
            }
        }
        let outcome = await acquired.value()
        deadline.cancel()
        // An outage's bookkeeping, as every call keeps it: this may be the call that tries the
        // database again.
        switch outcome {
        case .success: answered()
        case .failure(let error): throw report(error, while: "taking a lock")
        }
        return { _ = released.fulfil(()) }
    }

    func listen(_ handler: @escaping @Sendable (RowAnnouncement) -> Void) {
        let configuration = configuration
        let logger = logger
        let metrics = metrics
        _ = Task(executorPreference: thread) {
            var delay = Duration.milliseconds(100)
            var connectionID = 0
            while !Task.isCancelled {
                connectionID += 1
                do {
                    let connection = try await PostgresConnection.connect(
                        configuration: Self.connectionConfiguration(configuration), id: connectionID, logger: logger)
                    let check = Task(executorPreference: DatabaseThread.process) {
                        await Self.keepChecking(connection, configuration: configuration, logger: logger)
                    }
                    defer { check.cancel() }
                    do {
                        try await connection.listen(on: Self.channel) { notifications in
                            // Listening now: whatever was announced before may have been missed.
                            self.answered()
                            handler(.resynchronise)
                            delay = .milliseconds(100)
                            for try await notification in notifications {
                                guard let announcement = Self.announcement(notification.payload) else { continue }
                                metrics.notifications.increment()
                                handler(announcement)
                            }
                        }
                        try? await connection.close()
                    } catch {
                        try? await connection.close()
                        throw error
                    }
                } catch {
                    metrics.reconnects.increment()
                    logger.warning(
                        "lost the connection that hears other instances' commits to \(configuration.place); reconnecting",
                        metadata: ["error": "\(Self.translate(error).message)"])
                }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
        }
    }

    // MARK: Queries

    /// Checks the listening `connection` with a round trip every
    /// ``PostgresStoreConfiguration/listenerCheckInterval`` until cancelled, and closes it when one
    /// is not answered within the timeout: the listener's loop then connects again and the process
    /// reads what it missed.
    private static func keepChecking(
        _ connection: PostgresConnection, configuration: PostgresStoreConfiguration, logger: Logger
    ) async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: configuration.listenerCheckInterval)
            } catch { return }
            guard await answers(connection, within: configuration.timeout, logger: logger) else {
                if Task.isCancelled { return }
                logger.warning(
                    "the connection that hears other instances' commits to \(configuration.place) did not answer a check; replacing it"
                )
                try? await connection.close()
                return
            }
        }
    }

    /// Whether `connection` answers a query within `timeout`. The query is not waited for past
    /// it: on a connection the network dropped, it would wait until the connection is closed.
    private static func answers(_ connection: PostgresConnection, within timeout: Duration, logger: Logger) async -> Bool {
        let answered = OneShot<Bool>()
        // Left to finish on its own: a connection closed for not answering ends it.
        Task { answered.fulfil((try? await connection.query("SELECT 1", logger: logger)) != nil) }
        let deadline = Task {
            try? await Task.sleep(for: timeout)
            answered.fulfil(false)
        }
        defer { deadline.cancel() }
        return await answered.value()
    }

    private static func headQuery(_ group: [UInt8], locking: Bool) -> PostgresQuery {
        locking
            ? "SELECT header, epoch, generation, horizon FROM stc_groups WHERE id = \(ByteBuffer(bytes: group)) FOR UPDATE"
            : "SELECT header, epoch, generation, horizon FROM stc_groups WHERE id = \(ByteBuffer(bytes: group))"
    }

    private static func head(of group: [UInt8], in rows: PostgresRowSequence) async throws -> RowGroupHead? {
        var head: RowGroupHead? = nil
        for try await (header, epoch, generation, horizon) in rows.decode((ByteBuffer, Int64, Int64, Int64).self) {
            head = try RowGroupHead(columns: (header, epoch, generation, horizon))
        }
        return head
    }

    private static let headGone = TokenCacheError(
        .databaseFailure, "the group's head row is gone from stc_groups (deleted by hand?); open the group again")

    private static func rows(
        of group: [UInt8], epoch: UInt64, after version: UInt64, selection: RowSelection, on connection: PostgresConnection,
        locking: Bool, logger: Logger
    ) async throws -> (RowGroupHead, [SealedRow]) {
        guard let head = try await head(of: group, in: connection.query(headQuery(group, locking: locking), logger: logger))
        else { throw headGone }
        let id = ByteBuffer(bytes: group)
        let everything = head.epoch != epoch || version == 0 || version < head.horizon
        let query: PostgresQuery
        switch (everything, selection.kept?()) {
        case (true, nil):
            query = "SELECT name, version, deleted, sealed, part FROM stc_rows WHERE group_id = \(id) AND NOT deleted"
        case (true, let kept?):
            let parts = (kept + selection.loading).map { ByteBuffer(bytes: $0) }
            query = """
                SELECT name, version, deleted, sealed, part FROM stc_rows WHERE group_id = \(id) AND NOT deleted
                AND (part IS NULL OR part = ANY(\(parts)))
                """
        case (false, _) where selection.loading.isEmpty:
            query = """
                SELECT name, version, deleted, sealed, part FROM stc_rows WHERE group_id = \(id) AND version > \(Int64(version))
                AND version <= \(Int64(head.generation)) ORDER BY version
                """
        case (false, _):
            // The partitions loaded whole first, then what changed, in commit order: a row is in
            // one of the two, never both.
            let parts = selection.loading.map { ByteBuffer(bytes: $0) }
            query = """
                (SELECT name, version, deleted, sealed, part FROM stc_rows WHERE group_id = \(id) AND version <= \(Int64(version))
                AND NOT deleted AND part = ANY(\(parts)))
                UNION ALL
                (SELECT name, version, deleted, sealed, part FROM stc_rows WHERE group_id = \(id) AND version > \(Int64(version))
                AND version <= \(Int64(head.generation)) ORDER BY version)
                """
        }
        return (head, try await decodeRows(connection.query(query, logger: logger)))
    }

    /// The group's head, locked for the rest of the transaction on `connection`, and the rows
    /// ``rows(of:epoch:after:selection:)`` reads: one round trip when the writer does not start
    /// over and no other writer's commit came between the read's snapshot and the lock; else
    /// the rows again, read after the lock.
    private static func lockedRows(
        of group: [UInt8], epoch: UInt64, after version: UInt64, selection: RowSelection, on connection: PostgresConnection,
        metrics: PostgresMetrics, logger: Logger
    ) async throws -> (RowGroupHead, [SealedRow]) {
        if version > 0 {
            let (head, rows, complete) = try await GroupChangesStatement(
                group: group, version: version, loading: selection.loading
            )
            .runLocking(on: connection, logger: logger)
            guard let head else { throw headGone }
            if complete, head.epoch == epoch, version >= head.horizon { return (head, rows) }
            if !complete { metrics.conflicts.increment() }
        }
        return try await rows(
            of: group, epoch: epoch, after: version, selection: selection, on: connection, locking: true, logger: logger)
    }

    private static func decodeRows(_ result: PostgresRowSequence) async throws -> [SealedRow] {
        var rows: [SealedRow] = []
        for try await row in result {
            var cells = CellReader(row)
            let (name, version, deleted, sealed, part) = (
                try cells.bytes(), try cells.counter("row version"), try cells.bool(), try cells.bytes(),
                try cells.optionalBytes()
            )
            rows.append(
                SealedRow(
                    name: Array(name.readableBytesView), version: version, isDeletion: deleted,
                    sealed: Array(sealed.readableBytesView), partition: part.map { Array($0.readableBytesView) }))
        }
        return rows
    }

    /// The most partitions an announcement names; a commit that touched more announces none
    /// (every reader catches up), keeping the payload far under the 8,000 bytes `NOTIFY` takes.
    static let announcedPartitions = 100

    /// Writes `commit` at the version after `head`'s; returns the head after it. The rows go in
    /// one round trip with the head's move and the announcement (``CommitRowsStatement``).
    private static func write(
        _ commit: RowCommit, to group: [UInt8], after head: RowGroupHead, on connection: PostgresConnection, logger: Logger
    ) async throws -> RowGroupHead {
        let id = ByteBuffer(bytes: group)
        var after = head
        after.generation += 1
        if let horizon = commit.sweepingDeletionsThrough, horizon > head.horizon { after.horizon = horizon }
        let statement = commitStatement(commit.rows, to: group, version: after.generation, horizon: after.horizon)
        for try await _ in try await connection.execute(statement, logger: logger) {}
        if !commit.forgetting.isEmpty {
            let forgotten = commit.forgetting.map { ByteBuffer(bytes: $0) }
            try await connection.query(
                "DELETE FROM stc_parts WHERE group_id = \(id) AND part = ANY(\(forgotten))", logger: logger)
        }
        if after.horizon != head.horizon {
            // Bounded: the deletions of the commits since the last sweep. After the rows: a
            // deletion row this commit wrote over is a live row at the new version now.
            try await connection.query(
                """
                DELETE FROM stc_rows WHERE group_id = \(id) AND deleted
                AND version > \(Int64(head.horizon)) AND version <= \(Int64(after.horizon))
                """, logger: logger)
        }
        return after
    }

    /// The statement that writes `rows` to `group` at `version`, leaving the horizon at `horizon`.
    private static func commitStatement(_ rows: [SealedRow], to group: [UInt8], version: UInt64, horizon: UInt64)
        -> CommitRowsStatement
    {
        CommitRowsStatement(
            group: group, version: Int64(version), horizon: Int64(horizon), rows: rows,
            announcedPartitions: Int64(announcedPartitions), channel: channel, announcing: hex(group) + ":" + String(version))
    }

    /// `<group>:<generation>`, then `:` and the partitions the commit touched (comma-separated,
    /// perhaps none) unless it touched rows of no partition or too many to name.
    static func announcement(_ payload: String) -> RowAnnouncement? {
        // Every instance reads every commit's announcement, so it is read as bytes: no string
        // made for a field or a digit.
        var payload = payload
        return payload.withUTF8 { text -> RowAnnouncement? in
            let fields = text.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
            guard fields.count == 2 || fields.count == 3, let group = bytes(fromHex: fields[0]),
                let generation = UInt64(String(decoding: fields[1], as: UTF8.self))
            else { return nil }
            guard fields.count == 3 else { return .committed(group: group, generation: generation, partitions: nil) }
            var partitions: [[UInt8]] = []
            for field in fields[2].split(separator: UInt8(ascii: ",")) {
                guard let partition = bytes(fromHex: field) else { return nil }
                partitions.append(partition)
            }
            return .committed(group: group, generation: generation, partitions: partitions)
        }
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xf)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func bytes(fromHex digits: Slice<UnsafeBufferPointer<UInt8>>) -> [UInt8]? {
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var index = digits.startIndex
        while index < digits.endIndex {
            guard let high = HexDigit.value(digits[index]), let low = HexDigit.value(digits[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    // MARK: Calls and errors

    /// Runs `operation` on a connection of the pool (``leased(from:_:)``), on the database thread,
    /// and waits for it at most the configured timeout; errors come out as ``TokenCacheError``s.
    private func call<T: Sendable>(
        _ what: String, _ operation: @escaping @Sendable (PostgresConnection, Logger) async throws -> T
    ) throws -> T {
        try failIfKnownUnavailable(while: what)
        let client = client
        let logger = logger
        let started = ContinuousClock.now
        defer { metrics.roundTrips.recordNanoseconds((ContinuousClock.now - started).nanoseconds) }
        do {
            let result = try thread.wait(timeout: configuration.timeout, what) {
                try await Self.leased(from: client) { try await operation($0, logger) }
            }
            answered()
            return result
        } catch {
            throw report(Self.translate(error), while: what)
        }
    }

    /// Runs `operation` on a connection leased from `client`'s pool, and closes the connection if
    /// the task is cancelled (a call past its timeout) before `operation` ends. A query of
    /// postgres-nio does not end when its task is cancelled: on a connection that the network
    /// dropped without a word (a firewall's idle timeout, a failover without a reset) it waits for
    /// an answer that never comes, and keeps the connection leased, so each call that timed out
    /// would take one more of the pool's connections until none is left. Closing fails the query,
    /// and the pool makes a new connection in its place.
    ///
    /// The cancellation comes from another thread, and may come as `operation` ends: whichever
    /// of the two claims the connection first decides. If the cancellation did, the connection is
    /// closed before it goes back to the pool, so that the close never lands on a connection the
    /// pool has leased to another call.
    static func leased<T: Sendable>(
        from client: PostgresClient, _ operation: (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await client.withConnection { connection in
            let claim = LeaseClaim()
            let result: Result<T, any Error>
            do {
                result = .success(
                    try await withTaskCancellationHandler {
                        try await operation(connection)
                    } onCancel: {
                        if claim.take(.closing) { let _: EventLoopFuture<Void> = connection.close() }
                    })
            } catch {
                result = .failure(error)
            }
            if !claim.take(.ended) { try? await connection.closeFuture.get() }
            return try result.get()
        }
    }

    /// Who ended a lease first: its operation, or a cancellation that closes its connection.
    private final class LeaseClaim: Sendable {
        enum Claimant: UInt8 {
            case ended = 1
            case closing = 2
        }

        private let state = Atomic<UInt8>(0)

        /// Whether `claimant` is the first to claim the lease.
        func take(_ claimant: Claimant) -> Bool {
            state.compareExchange(expected: 0, desired: claimant.rawValue, ordering: .acquiringAndReleasing).exchanged
        }
    }

    /// Throws ``TokenCacheError/Code/databaseUnavailable`` at once while the database is known not
    /// to answer and its next try is not due; lets the call through when it is (the try).
    private func failIfKnownUnavailable(while what: String) throws {
        let now = ContinuousClock.now
        let since = outage.withLock { outage -> ContinuousClock.Instant? in
            guard var current = outage else { return nil }
            guard now < current.retryAt else {
                // This call is the try; those meanwhile fail at once until it answers.
                current.retryAt = now + configuration.timeout + current.wait
                outage = current
                return nil
            }
            return current.since
        }
        guard let since else { return }
        throw TokenCacheError(
            .databaseUnavailable,
            "the database \(configuration.place) has not answered for \(Self.seconds(now - since)) (while \(what)); "
                + "check that it is running and reachable: calls try it again every few seconds")
    }

    /// Holds this client in an outage for `duration` (`nil`: ends it), as when its instance is
    /// cut off from a database the others still reach: for tests.
    func simulateOutage(for duration: Duration?) {
        let now = ContinuousClock.now
        outage.withLock { outage in
            outage = duration.map { Outage(since: now, retryAt: now + $0, wait: OutageBackoff.longest) }
        }
    }

    /// Ends an outage: the database answered.
    private func answered() {
        guard
            let ended = outage.withLock({ outage -> Outage? in
                defer { outage = nil }; return outage
            })
        else { return }
        logger.notice(
            "the database \(configuration.place) answers again", metadata: ["after": "\(Self.seconds(.now - ended.since))"])
    }

    private static func seconds(_ duration: Duration) -> String {
        let tenths = duration.components.seconds * 10 + duration.components.attoseconds / 100_000_000_000_000_000
        return "\(tenths / 10).\(tenths % 10) s"
    }

    /// Counts and logs an outage (the database down, slow or unreachable) and starts or prolongs
    /// the time calls fail at once; returns `error`.
    private func report(_ error: TokenCacheError, while what: String) -> TokenCacheError {
        if error.code == .databaseUnavailable {
            metrics.outages.increment()
            let now = ContinuousClock.now
            let started = outage.withLock { outage -> Bool in
                let wait = outage.map { min($0.wait * 2, OutageBackoff.longest) } ?? OutageBackoff.first
                defer { outage = Outage(since: outage?.since ?? now, retryAt: now + wait, wait: wait) }
                return outage == nil
            }
            if started {
                logger.warning(
                    "the database \(configuration.place) is unavailable while \(what)",
                    metadata: ["error": "\(error.message)"])
            }
        }
        return error
    }

    /// A ``TokenCacheError`` for whatever the database or the client threw: its message says what
    /// to do, quotes the server's reason, and never the query or its values.
    static func translate(_ error: any Error) -> TokenCacheError {
        if let error = error as? TokenCacheError { return error }
        if let error = error as? PostgresTransactionError {
            // The first failure is the one to report: the rollback's follows from it.
            guard let first = error.beginError ?? error.closureError ?? error.commitError ?? error.rollbackError else {
                return TokenCacheError(.databaseFailure, "a database transaction failed")
            }
            return translate(first)
        }
        if let error = error as? ConnectionPoolError, error == .connectionCreationCircuitBreakerTripped {
            // The pool gave up on new connections after failing to make one for a while, and fails
            // every request at once until its next attempt: an outage like any other.
            return TokenCacheError(
                .databaseUnavailable,
                "the database could not be reached for a while and the client is waiting before trying again; check that it is running and reachable, then retry"
            )
        }
        guard let error = error as? PSQLError else {
            return TokenCacheError(.databaseFailure, "the database call failed: \(type(of: error))")
        }
        switch error.code {
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            let message = error.serverInfo?[.message] ?? "no message"
            switch state {
            case "28P01", "28000":
                return TokenCacheError(
                    .databaseFailure, "the database refused the login (\(message)); check the user and password")
            case "3D000":
                return TokenCacheError(.databaseFailure, "the database does not exist (\(message)); create it or fix the URL")
            case "42501":
                return TokenCacheError(
                    .databaseFailure,
                    "the database refused the request (\(message)); grant the role the rights the README lists")
            case "55P03":
                return TokenCacheError(
                    .lockTimeout, "another instance held the lock longer than this one may wait (\(message)); retry later")
            case "42P01":
                return TokenCacheError(
                    .databaseFailure,
                    "a token cache table is missing (\(message)): it was dropped or renamed while the schema's version row "
                        + "stayed, and the library does not make tables again over it; restore the database from a backup, "
                        + "or drop every stc_ table (the library then creates them, empty) and import or sign in again")
            case _ where state.hasPrefix("57P") || state.hasPrefix("08") || state == "53300":
                return TokenCacheError(
                    .databaseUnavailable, "the database is not accepting requests (\(message)); retry when it is back")
            default:
                return TokenCacheError(.databaseFailure, "the database refused the request: \(message) (SQLSTATE \(state))")
            }
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed,
            .queryCancelled:
            return TokenCacheError(
                .databaseUnavailable,
                "the database cannot be reached or closed the connection (\(error.code)); check that it is running, then retry")
        case .authMechanismRequiresPassword, .unsupportedAuthMechanism, .saslError:
            return TokenCacheError(
                .databaseFailure, "the database needs another way to log in (\(error.code)); check the user and password")
        case .sslUnsupported:
            return TokenCacheError(
                .databaseFailure,
                "the database does not offer TLS, which the configuration requires; use sslmode=prefer or enable TLS")
        default:
            return TokenCacheError(.databaseFailure, "the database call failed (\(error.code))")
        }
    }

    // MARK: Configurations

    private static func clientConfiguration(_ configuration: PostgresStoreConfiguration) throws -> PostgresClient.Configuration {
        switch configuration.endpoint {
        case .tcp(let host, let port):
            return PostgresClient.Configuration(
                host: host, port: port, username: configuration.username, password: configuration.password,
                database: configuration.database, tls: try clientTLS(configuration.tls))
        case .unixSocket(let path):
            return PostgresClient.Configuration(
                unixSocketPath: path, username: configuration.username, password: configuration.password,
                database: configuration.database)
        }
    }

    private static func clientTLS(_ mode: PostgresStoreConfiguration.TLSMode) throws -> PostgresClient.Configuration.TLS {
        switch mode {
        case .disable: .disable
        case .prefer: .prefer(.makeClientConfiguration())
        case .require: .require(.makeClientConfiguration())
        }
    }

    /// The listener's TLS context (the pool makes its own from the same configuration), its
    /// failure (trust roots that do not load) a typed error like every other of opening a store.
    private static func tlsContext() throws -> NIOSSLContext {
        do {
            return try NIOSSLContext(configuration: .makeClientConfiguration())
        } catch {
            throw TokenCacheError(
                .databaseFailure,
                "TLS to the database could not be set up (\(error)); check the system's trust roots (the ca-certificates package), or connect without TLS over a Unix socket or a trusted network"
            )
        }
    }

    private static func connectionConfiguration(_ configuration: PostgresStoreConfiguration) throws
        -> PostgresConnection.Configuration
    {
        switch configuration.endpoint {
        case .tcp(let host, let port):
            let tls: PostgresConnection.Configuration.TLS =
                switch configuration.tls {
                case .disable: .disable
                case .prefer: .prefer(try tlsContext())
                case .require: .require(try tlsContext())
                }
            return PostgresConnection.Configuration(
                host: host, port: port, username: configuration.username, password: configuration.password,
                database: configuration.database, tls: tls)
        case .unixSocket(let path):
            return PostgresConnection.Configuration(
                unixSocketPath: path, username: configuration.username, password: configuration.password,
                database: configuration.database)
        }
    }
}

extension RowGroupHead {
    /// A head from the columns of `stc_groups` as a statement reads them: `header`, `epoch`,
    /// `generation`, `horizon`.
    ///
    /// - Throws: ``TokenCacheError/Code/storeCorrupted`` for a negative generation or horizon.
    init(columns: (header: ByteBuffer, epoch: Int64, generation: Int64, horizon: Int64)) throws {
        self.init(
            header: Array(columns.header.readableBytesView), epoch: UInt64(bitPattern: columns.epoch),
            generation: try storedCounter(columns.generation, "group generation"),
            horizon: try storedCounter(columns.horizon, "group horizon"))
    }
}
