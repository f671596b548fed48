import Logging
import PostgresNIO
import SecureTokenCache

/// The tables the library keeps in a database, created and upgraded by the library itself.
///
/// - `stc_schema`: one row, the schema's version. A database whose version is newer than this
///   library knows is refused (``TokenCacheError/Code/unsupportedFormat``), never written.
/// - `stc_groups`: a group's head: its id (a hash of its name), its header (key source and key
///   check, never a key), its epoch, its commit count, and its horizon (the last version whose
///   deletion rows were swept: a reader behind it reloads).
/// - `stc_rows`: one row per record: the group, the record's keyed name, the version (commit)
///   that wrote it, whether it is a deletion, the record sealed, the keyed name of its partition
///   and its expiry (an access token's, in Unix seconds). Nothing else in clear.
/// - `stc_parts`: when each partition was last written (by the database's clock), so that a
///   sweep finds the partitions no instance wrote for long.
///
/// A sealed record stays in its row (``storageStatements``), not in the table's TOAST table.
///
/// The README shows the statements and the grants a DBA gives the library's role.
enum PostgresSchema {
    /// The version this library writes and reads.
    static let version = 4

    /// The key of the advisory lock that serialises creating and upgrading the tables, so that
    /// instances starting together do not race on `CREATE TABLE`.
    static let lockKey: Int64 = 0x5354_4353_4348_4d41  // "STCSCHMA"

    /// The statements that create the current version (each idempotent, none with a
    /// parameter); the README shows them to DBAs.
    static let statements: [String] =
        [
            """
            CREATE TABLE IF NOT EXISTS stc_schema (
                only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
                version integer NOT NULL
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS stc_groups (
                id bytea PRIMARY KEY,
                header bytea NOT NULL,
                epoch bigint NOT NULL,
                generation bigint NOT NULL DEFAULT 0,
                horizon bigint NOT NULL DEFAULT 0
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS stc_rows (
                group_id bytea NOT NULL REFERENCES stc_groups (id) ON DELETE CASCADE,
                name bytea NOT NULL,
                version bigint NOT NULL,
                deleted boolean NOT NULL,
                sealed bytea NOT NULL,
                part bytea,
                expires_at bigint,
                PRIMARY KEY (group_id, name)
            )
            """,
            "CREATE INDEX IF NOT EXISTS stc_rows_by_version ON stc_rows (group_id, version)",
        ] + partitionStatements + storageStatements

    /// What version 3 added besides two columns of `stc_rows`: finding a partition's rows, the
    /// rows whose expiry passed, and the partitions no instance wrote for long.
    private static let partitionStatements = [
        "CREATE INDEX IF NOT EXISTS stc_rows_by_part ON stc_rows (group_id, part) WHERE NOT deleted",
        "CREATE INDEX IF NOT EXISTS stc_rows_by_expiry ON stc_rows (group_id, expires_at) WHERE NOT deleted",
        """
        CREATE TABLE IF NOT EXISTS stc_parts (
            group_id bytea NOT NULL REFERENCES stc_groups (id) ON DELETE CASCADE,
            part bytea NOT NULL,
            written_at bigint NOT NULL,
            PRIMARY KEY (group_id, part)
        )
        """,
        "CREATE INDEX IF NOT EXISTS stc_parts_by_age ON stc_parts (group_id, written_at)",
    ]

    /// What version 4 added: a row keeps its sealed record inline, uncompressed, up to a page.
    ///
    /// A sealed record is ciphertext, which never compresses, so PostgreSQL's attempt at it on
    /// every write is wasted. And by default a row over about 2 KB (an id token, a large access
    /// token) has its record moved to the TOAST table: each write then writes two tables and two
    /// indexes, and a partition load reads them. Both change only how rows written afterwards
    /// are stored; neither rewrites the table.
    static let storageStatements = [
        "ALTER TABLE stc_rows SET (toast_tuple_target = 8160)",
        "ALTER TABLE stc_rows ALTER COLUMN sealed SET STORAGE EXTERNAL",
    ]

    /// The statements that take the tables of version `key - 1` to version `key`.
    static let upgrades: [Int: [String]] = [
        2: ["ALTER TABLE stc_groups ADD COLUMN IF NOT EXISTS horizon bigint NOT NULL DEFAULT 0"],
        // Rows written before have no partition: every reader keeps them, as it keeps app
        // metadata, until they are written again.
        3: [
            "ALTER TABLE stc_rows ADD COLUMN IF NOT EXISTS part bytea",
            "ALTER TABLE stc_rows ADD COLUMN IF NOT EXISTS expires_at bigint",
        ] + partitionStatements,
        4: storageStatements,
    ]

    /// The oldest version this library uses as it is. The upgrades after it change only how
    /// PostgreSQL stores the rows, so a role that may not make them (the tables belong to a DBA)
    /// uses the tables as they are, and a warning says what their owner may run.
    static let oldestUsable = 3

    /// Creates the tables when the database has none, upgrades those of an older version, and
    /// refuses those of a newer one. Without `creating` (a command that only reads or removes), it
    /// changes nothing: no tables is ``TokenCacheError/Code/notFound``, tables older than
    /// ``oldestUsable`` are refused.
    static func prepare(_ connection: PostgresConnection, creating: Bool = true, logger: Logger) async throws {
        // Instances that may create or upgrade the tables take turns. One that only reads takes no
        // lock, so that it does not queue behind them: it reads the tables as they were committed
        // (none yet, while another instance creates them, is notFound, as a moment earlier), and
        // the statements of an upgrade that lock a table still make it wait for them.
        if creating { try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger) }
        let existing = try await connection.query("SELECT to_regclass('stc_schema') IS NOT NULL", logger: logger)
        var exists = false
        for try await (present) in existing.decode(Bool.self) { exists = present }
        if exists {
            var found: Int? = nil
            for try await (version) in try await connection.query("SELECT version FROM stc_schema", logger: logger)
                .decode(Int.self)
            {
                found = version
            }
            guard let found else {
                throw TokenCacheError(
                    .databaseFailure, "the table stc_schema has no version row; restore it or drop the stc_ tables")
            }
            guard found <= version else {
                throw TokenCacheError(
                    .unsupportedFormat,
                    "the database's token cache tables are version \(found), written by a newer version of SecureTokenCache "
                        + "(this one knows version \(version)); upgrade the library")
            }
            if found == version { return }
            guard creating else {
                if found >= oldestUsable { return }
                throw TokenCacheError(
                    .unsupportedFormat,
                    "the database's token cache tables are version \(found), older than this library's \(version); "
                        + "open the group once from an instance of this version, which upgrades them")
            }
            try await upgrade(connection, from: found, logger: logger)
            return
        }
        guard creating else {
            throw TokenCacheError(.notFound, "the database has no token cache tables, so no group; nothing was created")
        }
        for statement in statements { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
        try await connection.query(
            "INSERT INTO stc_schema (version) VALUES (\(version)) ON CONFLICT (only_row) DO UPDATE SET version = excluded.version",
            logger: logger)
        logger.notice("created the token cache tables (schema version \(version))")
    }

    /// Takes the tables from version `found` towards ``version``, one step at a time, and records
    /// the version reached. A step after ``oldestUsable`` that the role may not make (it does not
    /// own the tables) is rolled back, and the tables are used as they are: the warning lists what
    /// their owner may run. A step before it is needed: then the error says who must make it.
    private static func upgrade(_ connection: PostgresConnection, from found: Int, logger: Logger) async throws {
        var reached = found
        for step in (found + 1)...version {
            let statements = upgrades[step] ?? []
            let optional = step > oldestUsable
            if optional { try await connection.query("SAVEPOINT stc_upgrade", logger: logger) }
            do {
                for statement in statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42501" {
                let owner = (statements + ["UPDATE stc_schema SET version = \(step)"]).joined(separator: "; ")
                guard optional else {
                    throw TokenCacheError(
                        .databaseFailure,
                        "the database's token cache tables are version \(found) and this library needs version "
                            + "\(oldestUsable), but its role may not upgrade them (\(error.serverInfo?[.message] ?? "")); "
                            + "have their owner open a group once with this version, which upgrades them")
                }
                try await connection.query("ROLLBACK TO SAVEPOINT stc_upgrade", logger: logger)
                let warning =
                    "the token cache tables are version \(reached), and this role may not upgrade them; they are used "
                    + "as they are, but rows are stored as PostgreSQL stores them by default: have the tables' owner run: "
                    + owner
                logger.warning("\(warning)")
                break
            }
            if optional { try await connection.query("RELEASE SAVEPOINT stc_upgrade", logger: logger) }
            reached = step
        }
        guard reached > found else { return }
        try await connection.query("UPDATE stc_schema SET version = \(reached)", logger: logger)
        logger.notice("upgraded the token cache tables from schema version \(found) to \(reached)")
    }
}
