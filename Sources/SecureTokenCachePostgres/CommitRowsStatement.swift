import NIOCore
import PostgresNIO
import SecureTokenCache

/// What a commit writes, in one statement: its rows, their partitions' last writes, the group's
/// new generation and horizon, and the announcement (``PostgresRowDatabase/announcement(_:)``).
///
/// A commit waits for each of its round trips with the group's head locked, so every other writer
/// of the group waits for them too: one statement is one round trip. Its parts are data-modifying
/// statements on different tables, so none needs to see another's changes; the announcement names
/// the partitions of the rows the first part returns. A prepared statement: parsed once per
/// connection; no value changes its plan, so PostgreSQL keeps one after the first few runs.
struct CommitRowsStatement: PostgresPreparedStatement {
    // Named: the default name is made from the type's name with `String(reflecting:)` on every
    // run.
    static let name = "stc_commit_rows"
    static let sql = query(ifStillAt: false)

    // A row of no partition and one without an expiry travel as an empty name and a 0: a bytea
    // array cannot carry NULL here. A deletion row keeps the partition its record was written
    // with. The announcement names the partitions unless a row of no partition or more than
    // $9 partitions were touched.
    private static func query(ifStillAt: Bool) -> String {
        // The conditional form moves the head only from the generation before the commit's, in
        // the reader's epoch; the other parts write only when it did (they read its output, so
        // PostgreSQL runs it first), and the statement hands the new head back, or nothing.
        let (head, onlyIfMoved) =
            ifStillAt
            ? (
                """
                UPDATE stc_groups SET generation = $2 WHERE id = $1 AND generation = $2 - 1 AND epoch = $13
                    RETURNING header, epoch, generation, horizon
                """, " WHERE EXISTS (SELECT FROM g)"
            )
            : ("UPDATE stc_groups SET generation = $2, horizon = $3 WHERE id = $1", "")
        let announce = """
            pg_notify($11, $12::text || CASE
                WHEN bool_or(part IS NULL) OR count(DISTINCT part) > $9 THEN ''
                ELSE ':' || COALESCE(string_agg(DISTINCT encode(part, 'hex'), ','), '') END)
            """
        let result =
            ifStillAt
            ? "SELECT g.header, g.epoch, g.generation, g.horizon, (SELECT \(announce) FROM r)::text FROM g"
            : "SELECT \(announce) FROM r"
        return """
            WITH g AS (
                \(head)
            ), r AS (
                INSERT INTO stc_rows (group_id, name, version, deleted, sealed, part, expires_at)
                SELECT $1, n, $2, d, s, NULLIF(p, ''::bytea), NULLIF(e, 0)
                FROM unnest($4::bytea[], $5::boolean[], $6::bytea[], $7::bytea[], $8::bigint[]) AS r(n, d, s, p, e)\(onlyIfMoved)
                ON CONFLICT (group_id, name) DO UPDATE
                SET version = excluded.version, deleted = excluded.deleted, sealed = excluded.sealed,
                    part = COALESCE(excluded.part, stc_rows.part), expires_at = excluded.expires_at
                RETURNING part
            ), w AS (
                INSERT INTO stc_parts (group_id, part, written_at)
                SELECT $1, p, extract(epoch FROM now())::bigint FROM unnest($10::bytea[]) AS t(p)\(onlyIfMoved)
                ON CONFLICT (group_id, part) DO UPDATE SET written_at = excluded.written_at
            )
            \(result)
            """
    }

    typealias Row = Void

    /// The group's id.
    var group: [UInt8]
    /// The commit's version: the group's generation after it.
    var version: Int64
    /// The group's horizon after the commit.
    var horizon: Int64
    /// The rows, each written at ``version``.
    var rows: [SealedRow]
    /// The most partitions an announcement names.
    var announcedPartitions: Int64
    /// The channel the announcement goes to.
    var channel: String
    /// The announcement's start: `<group>:<generation>`.
    var announcing: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 13)
        bindings.append(ByteBuffer(bytes: group))
        bindings.append(version)
        bindings.append(horizon)
        bindings.append(ByteaArray(rows.map(\.name)))
        bindings.append(rows.map(\.isDeletion))
        bindings.append(ByteaArray(rows.map(\.sealed)))
        bindings.append(ByteaArray(rows.map { $0.partition ?? [] }))
        bindings.append(rows.map { $0.isDeletion ? 0 : $0.expiresAt ?? 0 })
        bindings.append(announcedPartitions)
        bindings.append(ByteaArray(Array(Set(rows.compactMap { $0.isDeletion ? nil : $0.partition }))))
        bindings.append(channel)
        bindings.append(announcing)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws {}

    /// The same commit, made without a transaction around it and only if the group is still at
    /// the generation before ``CommitRowsStatement/version`` in `epoch`: a writer that knows of no
    /// commit since its last read writes in one round trip, holding no lock while it waits. The
    /// horizon stays as it is. Its one row is the group's head after it; no row means another
    /// commit came first and nothing was written.
    struct IfStillAt: PostgresPreparedStatement {
        static let name = "stc_commit_rows_if_still_at"
        static let sql = CommitRowsStatement.query(ifStillAt: true)

        /// The head's columns; the announcement's column is there to run it, and is not read.
        typealias Row = (ByteBuffer, Int64, Int64, Int64)

        var commit: CommitRowsStatement
        var epoch: UInt64

        func makeBindings() throws -> PostgresBindings {
            var bindings = try commit.makeBindings()
            bindings.append(Int64(bitPattern: epoch))
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {
            var cells = CellReader(row)
            return (try cells.bytes(), try cells.int64(), try cells.int64(), try cells.int64())
        }
    }
}
