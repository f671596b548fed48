import NIOCore
import PostgresNIO
import SecureTokenCache

/// Reads PostgreSQL's binary form of a one-dimensional array without a `NULL` (what `array_agg`
/// of a `NOT NULL` column gives): straight from the bytes, with no buffer per element, which
/// postgres-nio's `[ByteBuffer]` decoding makes.
///
/// The form: the number of dimensions, whether an element is `NULL`, the element type; then per
/// dimension its length and lower bound; then each element's length and bytes.
enum BinaryArray {
    /// The elements of a `bytea[]`.
    static func byteArrays(_ buffer: ByteBuffer) throws -> [[UInt8]] {
        try elements(of: buffer, type: .bytea) { $0.isEmpty ? [] : Array($0) }
    }

    /// The elements of an `int8[]`.
    static func int64s(_ buffer: ByteBuffer) throws -> [Int64] {
        try elements(of: buffer, type: .int8) { bytes in
            guard bytes.count == 8 else { throw malformed("an int8 element is \(bytes.count) bytes long") }
            return Int64(bigEndian: bytes.loadUnaligned(as: Int64.self))
        }
    }

    /// The error for an array this reader cannot take apart, saying `what`.
    static func malformed(_ what: String) -> TokenCacheError {
        TokenCacheError(
            .databaseFailure,
            "PostgreSQL sent a partition's rows in a form this version does not read (\(what)); "
                + "is the schema another version's?")
    }

    private static func elements<Element>(
        of buffer: ByteBuffer, type: PostgresDataType, _ element: (UnsafeRawBufferPointer) throws -> Element
    ) throws -> [Element] {
        try buffer.withUnsafeReadableBytes { bytes in
            var offset = 0
            func integer() throws -> Int32 {
                guard bytes.count - offset >= 4 else { throw malformed("the array is cut short") }
                defer { offset += 4 }
                return Int32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self))
            }
            let dimensions = try integer()
            let hasNull = try integer()
            let elementType = UInt32(bitPattern: try integer())
            guard elementType == type.rawValue else {
                throw malformed("an array of type \(elementType) where \(type) was expected")
            }
            if dimensions == 0 { return [] }
            guard dimensions == 1, hasNull == 0 else { throw malformed("an array of \(dimensions) dimensions or with a NULL") }
            let count = Int(try integer())
            _ = try integer()  // the lower bound
            guard count >= 0, count <= (bytes.count - offset) / 4 else { throw malformed("an array of \(count) elements") }
            var elements: [Element] = []
            elements.reserveCapacity(count)
            for _ in 0..<count {
                let length = Int(try integer())
                guard length >= 0, length <= bytes.count - offset else { throw malformed("an element is cut short") }
                elements.append(try element(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)])))
                offset += length
            }
            guard offset == bytes.count else { throw malformed("bytes follow the last element") }
            return elements
        }
    }
}
