import NIOCore
import PostgresNIO
import SecureTokenCache

/// A group's head and, in the same statement, its rows written after a version and the live rows
/// of the partitions a reader starts keeping: what a catch-up and a partition load read.
///
/// One statement is one snapshot in PostgreSQL, so it needs no transaction around it, and it is a
/// prepared statement (parsed and planned once per connection): a lookup that misses in memory
/// waits for this one round trip. The head's columns repeat on every row (all `NULL` row columns
/// when there is no row); no row at all means the group has no head.
struct GroupChangesStatement: PostgresPreparedStatement {
    // The partitions loaded whole first, then what changed, in commit order: a row is in one of
    // the two, never both.
    static let sql = """
        SELECT g.header, g.epoch, g.generation, g.horizon, r.name, r.version, r.deleted, r.sealed, r.part
        FROM stc_groups g LEFT JOIN LATERAL (
            (SELECT name, version, deleted, sealed, part FROM stc_rows
             WHERE group_id = $1 AND version <= $2 AND NOT deleted AND part = ANY($3))
            UNION ALL
            (SELECT name, version, deleted, sealed, part FROM stc_rows
             WHERE group_id = $1 AND version > $2 ORDER BY version)
        ) r ON true
        WHERE g.id = $1
        """

    typealias Row = (ByteBuffer, Int64, Int64, Int64, ByteBuffer?, Int64?, Bool?, ByteBuffer?, ByteBuffer?)

    var group: [UInt8]
    var version: UInt64
    var loading: [[UInt8]]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(ByteBuffer(bytes: group))
        bindings.append(Int64(version))
        bindings.append(loading.map { ByteBuffer(bytes: $0) })
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }

    /// Runs the statement on a connection of `client`'s pool: the head (`nil` when the group has
    /// none) and the rows.
    func run(on client: PostgresClient, logger: Logger) async throws -> (RowGroupHead?, [SealedRow]) {
        var head: RowGroupHead? = nil
        var rows: [SealedRow] = []
        for try await (header, epoch, generation, horizon, name, version, deleted, sealed, part) in try await client.execute(
            self, logger: logger)
        {
            if head == nil {
                head = RowGroupHead(
                    header: Array(header.readableBytesView), epoch: UInt64(bitPattern: epoch), generation: UInt64(generation),
                    horizon: UInt64(horizon))
            }
            guard let name, let version, let deleted, let sealed else { continue }
            rows.append(
                SealedRow(
                    name: Array(name.readableBytesView), version: UInt64(version), isDeletion: deleted,
                    sealed: Array(sealed.readableBytesView), partition: part.map { Array($0.readableBytesView) }))
        }
        return (head, rows)
    }
}
