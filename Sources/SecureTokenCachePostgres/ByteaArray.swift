import NIOCore
import PostgresNIO

/// A `bytea[]` parameter (a commit's rows, the partitions a load reads) written from byte arrays
/// as they are: postgres-nio's `[ByteBuffer]` needs each element copied into a buffer of its own
/// first, an allocation per element.
struct ByteaArray: PostgresNonThrowingEncodable {
    static var psqlType: PostgresDataType { .byteaArray }
    static var psqlFormat: PostgresFormat { .binary }

    /// The elements, in order.
    var elements: [[UInt8]]

    init(_ elements: [[UInt8]]) { self.elements = elements }

    // PostgreSQL's binary array form: dimensions, whether there is a NULL, the element type,
    // then per dimension its length and lower bound, then each element's length and bytes.
    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        buffer.writeInteger(elements.isEmpty ? 0 : 1, as: Int32.self)
        buffer.writeInteger(0, as: Int32.self)
        buffer.writeInteger(PostgresDataType.bytea.rawValue)
        guard !elements.isEmpty else { return }
        buffer.writeInteger(Int32(elements.count))
        buffer.writeInteger(1, as: Int32.self)
        for element in elements {
            buffer.writeInteger(Int32(element.count))
            buffer.writeBytes(element)
        }
    }
}
