import NIOCore
import PostgresNIO
import SecureTokenCache

/// A group's head and, in the same statement, its rows written after a version and the live rows
/// of the partitions a reader starts keeping: what a catch-up and a partition load read.
///
/// One statement is one snapshot in PostgreSQL, so it needs no transaction around it, and it is a
/// prepared statement (parsed and planned once per connection): a lookup that misses in memory
/// waits for this one round trip. The head's columns repeat on every row (all `NULL` row columns
/// when there is no row); no row at all means the group has no head. The changes are bounded by
/// the head's generation, which no row's version passes, so that the plan made once for every
/// version reads them through the version index.
struct GroupChangesStatement {
    // The partitions loaded whole first, then what changed, in commit order: a row is in one of
    // the two, never both. A lookup that misses loads one partition, which the statement compares
    // as one value: an array parameter costs its decoding and an array scan on every load.
    // Without `changes`, only the partition's rows: what a reader reads when it has heard of no
    // commit past its version, and which is the whole answer when the head is still there.
    private static func query(locking: Bool, onePartition: Bool, changes: Bool = true) -> String {
        let loaded = """
            SELECT name, version, deleted, sealed, part FROM stc_rows
             WHERE group_id = $1 AND version <= $2 AND NOT deleted AND \(onePartition ? "part = $3" : "part = ANY($3)")
            """
        let changed = """
            SELECT name, version, deleted, sealed, part FROM stc_rows
             WHERE group_id = $1 AND version > $2 AND version <= g.generation ORDER BY version
            """
        let rows = changes ? "(\(loaded))\nUNION ALL\n(\(changed))" : loaded
        return """
            SELECT g.header, g.epoch, g.generation, g.horizon, r.name, r.version, r.deleted, r.sealed, r.part
            FROM stc_groups g LEFT JOIN LATERAL (
            \(rows)
            ) r ON true
            WHERE g.id = $1
            """ + (locking ? " FOR UPDATE OF g" : "")
    }

    typealias Row = (ByteBuffer, Int64, Int64, Int64, ByteBuffer?, Int64?, Bool?, ByteBuffer?, ByteBuffer?)

    var group: [UInt8]
    var version: UInt64
    var loading: [[UInt8]]

    fileprivate func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(ByteBuffer(bytes: group))
        bindings.append(Int64(version))
        if loading.count == 1 {
            bindings.append(ByteBuffer(bytes: loading[0]))
        } else {
            bindings.append(ByteaArray(loading))
        }
        return bindings
    }

    fileprivate static func decodeRow(_ row: PostgresRow) throws -> Row {
        var cells = CellReader(row)
        return (
            try cells.bytes(), try cells.int64(), try cells.int64(), try cells.int64(), try cells.optionalBytes(),
            try cells.optionalInt64(), try cells.optionalBool(), try cells.optionalBytes(), try cells.optionalBytes()
        )
    }

    /// Runs the statement on `connection`: the head (`nil` when the group has none) and the rows.
    func run(on connection: PostgresConnection, logger: Logger) async throws -> (RowGroupHead?, [SealedRow]) {
        if loading.count == 1 {
            return try await Self.collect(connection.execute(OnePartition(reading: self), logger: logger))
        }
        return try await Self.collect(connection.execute(Partitions(reading: self), logger: logger))
    }

    /// The live rows of the one partition being loaded written up to `version`, without what
    /// changed after it, and the head: the whole answer when the head's generation is still
    /// `version`, and otherwise a reader runs ``run(on:logger:)`` as well. A cheaper read for a
    /// reader that has heard of no commit past `version`.
    func runLoadingOnly(on connection: PostgresConnection, logger: Logger) async throws -> (RowGroupHead?, [SealedRow]) {
        precondition(loading.count == 1, "a read without the changes loads one partition")
        return try await Self.collect(connection.execute(OnePartitionLoadingOnly(reading: self), logger: logger))
    }

    /// The same read, locking the group's head for the rest of the transaction on `connection`
    /// (a commit's).
    ///
    /// The lock may be granted only after another writer's commit, and PostgreSQL then hands back
    /// the head as that commit left it but the rows as the statement's snapshot, taken before the
    /// wait, showed them: `complete` is false when rows the head counts may be missing (no row
    /// of the head's generation was read although it is past `version`), and the commit reads
    /// them again.
    func runLocking(on connection: PostgresConnection, logger: Logger) async throws -> (
        head: RowGroupHead?, rows: [SealedRow], complete: Bool
    ) {
        let (head, rows) =
            loading.count == 1
            ? try await Self.collect(connection.execute(OnePartitionLocking(reading: self), logger: logger))
            : try await Self.collect(connection.execute(PartitionsLocking(reading: self), logger: logger))
        guard let head else { return (nil, rows, true) }
        return (head, rows, head.generation <= version || rows.last?.version == head.generation)
    }

    /// The statement's prepared forms: any number of partitions to load, or one, each with the
    /// group's head locked or not, and one partition without the changes. Each is named: a type's
    /// default name is its full Swift name, and PostgreSQL cuts a statement's name to 63 bytes,
    /// which would give them all one name.
    fileprivate protocol Form: PostgresPreparedStatement where Row == GroupChangesStatement.Row {
        var reading: GroupChangesStatement { get }
    }

    private struct Partitions: Form {
        static let name = "stc_group_changes"
        static let sql = query(locking: false, onePartition: false)
        var reading: GroupChangesStatement
    }

    private struct OnePartition: Form {
        static let name = "stc_group_changes_one"
        static let sql = query(locking: false, onePartition: true)
        var reading: GroupChangesStatement
    }

    private struct OnePartitionLoadingOnly: Form {
        static let name = "stc_group_changes_one_loading_only"
        static let sql = query(locking: false, onePartition: true, changes: false)
        var reading: GroupChangesStatement
    }

    private struct PartitionsLocking: Form {
        static let name = "stc_group_changes_locking"
        static let sql = query(locking: true, onePartition: false)
        var reading: GroupChangesStatement
    }

    private struct OnePartitionLocking: Form {
        static let name = "stc_group_changes_one_locking"
        static let sql = query(locking: true, onePartition: true)
        var reading: GroupChangesStatement
    }

    private static func collect<Rows: AsyncSequence>(_ result: Rows) async throws -> (RowGroupHead?, [SealedRow])
    where Rows.Element == Row {
        var head: RowGroupHead? = nil
        var rows: [SealedRow] = []
        for try await (header, epoch, generation, horizon, name, version, deleted, sealed, part) in result {
            if head == nil {
                head = try RowGroupHead(columns: (header, epoch, generation, horizon))
            }
            guard let name, let version, let deleted, let sealed else { continue }
            rows.append(
                SealedRow(
                    name: Array(name.readableBytesView), version: try storedCounter(version, "row version"),
                    isDeletion: deleted,
                    sealed: Array(sealed.readableBytesView), partition: part.map { Array($0.readableBytesView) }))
        }
        return (head, rows)
    }
}

extension GroupChangesStatement.Form {
    func makeBindings() throws -> PostgresBindings { reading.makeBindings() }
    func decodeRow(_ row: PostgresRow) throws -> Row { try GroupChangesStatement.decodeRow(row) }
}
