#if canImport(SecureTokenCachePostgres)
    import NIOCore
    import PostgresNIO
    import SecureTokenCache
    import Testing

    @testable import SecureTokenCachePostgres

    /// The arrays a partition load reads (``BinaryArray``): what postgres-nio writes for the same
    /// elements reads back as they were, and every malformed form is a typed error, never a crash
    /// or a wrong row. No server needed.
    @Suite(.timeLimit(.minutes(1)))
    struct BinaryArrayTests {
        @Test(arguments: ByteaArrayTests.cases)
        func readsTheByteArraysPostgresNIOWrites(_ elements: [[UInt8]]) throws {
            var buffer = ByteBuffer()
            elements.map { ByteBuffer(bytes: $0) }.encode(into: &buffer, context: .default)
            #expect(try BinaryArray.byteArrays(buffer) == elements)
        }

        @Test(arguments: [[], [0], [1, -1, .max, .min, 42]] as [[Int64]])
        func readsTheIntegersPostgresNIOWrites(_ elements: [Int64]) throws {
            var buffer = ByteBuffer()
            elements.encode(into: &buffer, context: .default)
            #expect(try BinaryArray.int64s(buffer) == elements)
        }

        @Test func anArrayCutAnywhereIsATypedError() throws {
            var whole = ByteBuffer()
            [ByteBuffer(bytes: [1, 2, 3]), ByteBuffer(bytes: [4])].encode(into: &whole, context: .default)
            for length in 0..<whole.readableBytes {
                let cut = whole.getSlice(at: whole.readerIndex, length: length)!
                Self.expectDatabaseFailure { try BinaryArray.byteArrays(cut) }
            }
            var longer = whole
            longer.writeInteger(UInt8(0))
            Self.expectDatabaseFailure { try BinaryArray.byteArrays(longer) }
        }

        @Test func anotherElementTypeADimensionMoreOrANullIsATypedError() {
            var integers = ByteBuffer()
            [Int64(1)].encode(into: &integers, context: .default)
            Self.expectDatabaseFailure { try BinaryArray.byteArrays(integers) }

            var texts = ByteBuffer()
            ["a"].encode(into: &texts, context: .default)
            Self.expectDatabaseFailure { try BinaryArray.int64s(texts) }

            // int8 elements of another length than eight bytes.
            Self.expectDatabaseFailure { try BinaryArray.int64s(Self.array(type: .int8, elements: [[1, 2, 3, 4]])) }
            Self.expectDatabaseFailure { try BinaryArray.byteArrays(Self.array(type: .bytea, elements: [[1]], dimensions: 2)) }
            Self.expectDatabaseFailure { try BinaryArray.byteArrays(Self.array(type: .bytea, elements: [[1]], hasNull: 1)) }
            Self.expectDatabaseFailure { try BinaryArray.byteArrays(Self.array(type: .bytea, elements: [[1]], count: -1)) }
            Self.expectDatabaseFailure { try BinaryArray.byteArrays(Self.array(type: .bytea, elements: [[1]], count: 1 << 30)) }
            Self.expectDatabaseFailure { try BinaryArray.byteArrays(Self.array(type: .bytea, elements: [[1]], firstLength: -1)) }
        }

        /// An array in PostgreSQL's binary form, with the header's fields as given.
        static func array(
            type: PostgresDataType, elements: [[UInt8]], dimensions: Int32 = 1, hasNull: Int32 = 0, count: Int32? = nil,
            firstLength: Int32? = nil
        ) -> ByteBuffer {
            var buffer = ByteBuffer()
            buffer.writeInteger(dimensions)
            buffer.writeInteger(hasNull)
            buffer.writeInteger(type.rawValue)
            buffer.writeInteger(count ?? Int32(elements.count))
            buffer.writeInteger(Int32(1))
            for (index, element) in elements.enumerated() {
                buffer.writeInteger(index == 0 ? firstLength ?? Int32(element.count) : Int32(element.count))
                buffer.writeBytes(element)
            }
            return buffer
        }

        static func expectDatabaseFailure<T>(_ body: () throws -> T, sourceLocation: SourceLocation = #_sourceLocation) {
            do {
                _ = try body()
                Issue.record("no error", sourceLocation: sourceLocation)
            } catch let error as TokenCacheError {
                #expect(error.code == .databaseFailure, sourceLocation: sourceLocation)
                #expect(error.message.contains("schema"), sourceLocation: sourceLocation)
            } catch {
                Issue.record("another error: \(error)", sourceLocation: sourceLocation)
            }
        }
    }
#endif
