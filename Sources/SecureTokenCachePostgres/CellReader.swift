import NIOCore
import PostgresNIO
import SecureTokenCache

/// Reads a row's columns in order, as the statements that read a group's rows declare them:
/// `bytea`, `int8` and `bool` columns in binary format, read straight from their bytes.
///
/// `PostgresRow.decode` of a tuple resolves the tuple's type and each column's decoder at run
/// time, on every row, and a partition load reads several rows of nine columns while a lookup
/// waits. A column of another type or format, or a `NULL` where a value is required, goes to
/// postgres-nio's own decoding, so the value or the error is the one it would give.
struct CellReader {
    private var cells: PostgresRow.Iterator

    /// A reader of `row`'s columns from the first.
    init(_ row: PostgresRow) { cells = row.makeIterator() }

    /// The next column, a `bytea`.
    mutating func bytes() throws -> ByteBuffer {
        let cell = try next()
        if let bytes = cell.bytes, cell.dataType == .bytea, cell.format == .binary { return bytes }
        return try cell.decode(ByteBuffer.self)
    }

    /// The next column, a `bytea` or `NULL`.
    mutating func optionalBytes() throws -> ByteBuffer? {
        let cell = try next()
        guard let bytes = cell.bytes else { return nil }
        if cell.dataType == .bytea, cell.format == .binary { return bytes }
        return try cell.decode(ByteBuffer.self)
    }

    /// The next column, an `int8`.
    mutating func int64() throws -> Int64 {
        let cell = try next()
        if let value = Self.binaryInt64(cell) { return value }
        return try cell.decode(Int64.self)
    }

    /// The next column, an `int8` that holds one of the counters the library keeps (a row's
    /// version, a group's generation or horizon): see ``storedCounter(_:_:)``.
    mutating func counter(_ column: String) throws -> UInt64 { try storedCounter(try int64(), column) }

    /// The next column, an `int8` or `NULL`.
    mutating func optionalInt64() throws -> Int64? {
        let cell = try next()
        guard cell.bytes != nil else { return nil }
        if let value = Self.binaryInt64(cell) { return value }
        return try cell.decode(Int64.self)
    }

    /// The next column, a `bool`.
    mutating func bool() throws -> Bool {
        let cell = try next()
        if let value = Self.binaryBool(cell) { return value }
        return try cell.decode(Bool.self)
    }

    /// The next column, a `bool` or `NULL`.
    mutating func optionalBool() throws -> Bool? {
        let cell = try next()
        guard cell.bytes != nil else { return nil }
        if let value = Self.binaryBool(cell) { return value }
        return try cell.decode(Bool.self)
    }

    private static func binaryBool(_ cell: PostgresCell) -> Bool? {
        guard cell.dataType == .bool, cell.format == .binary, let bytes = cell.bytes, bytes.readableBytes == 1,
            let byte = bytes.getInteger(at: bytes.readerIndex, as: UInt8.self), byte <= 1
        else { return nil }
        return byte == 1
    }

    private static func binaryInt64(_ cell: PostgresCell) -> Int64? {
        guard cell.dataType == .int8, cell.format == .binary, let bytes = cell.bytes, bytes.readableBytes == 8 else { return nil }
        return bytes.getInteger(at: bytes.readerIndex, endianness: .big, as: Int64.self)
    }

    private mutating func next() throws -> PostgresCell {
        guard let cell = cells.next() else {
            throw TokenCacheError(
                .databaseFailure, "a row came back with fewer columns than the statement reads; is the schema another version's?")
        }
        return cell
    }
}

/// A counter the library keeps in an `int8` column (a row's version, a group's generation or
/// horizon): the library only ever writes it from zero up, so a negative one was written by
/// someone else, and is reported as damage rather than trapped on when it is converted.
func storedCounter(_ value: Int64, _ column: String) throws -> UInt64 {
    guard value >= 0 else {
        throw TokenCacheError(
            .storeCorrupted,
            "the database holds a negative \(column) (\(value)), which this library never writes: the table was changed by hand; restore the database from a backup or clear the group"
        )
    }
    return UInt64(value)
}
