#if canImport(SecureTokenCachePostgres)
    import NIOCore
    import PostgresNIO
    import Testing

    @testable import SecureTokenCachePostgres

    /// The `bytea[]` parameters a commit and a partition load send (``ByteaArray``), written from
    /// byte arrays as they are: the bytes postgres-nio writes for the same elements as
    /// `[ByteBuffer]`, its own encoding of the type. No server needed.
    @Suite(.timeLimit(.minutes(1)))
    struct ByteaArrayTests {
        static let cases: [[[UInt8]]] = [
            [],
            [[]],
            [[0x00]],
            [Array(repeating: 0xAB, count: 32), [], [0x01, 0x02, 0x03]],
            (0..<40).map { Array(repeating: UInt8($0), count: $0 * 37) },
        ]

        @Test(arguments: cases)
        func writesWhatPostgresNIOWritesForTheSameElements(_ elements: [[UInt8]]) {
            var ours = ByteBuffer()
            ByteaArray(elements).encode(into: &ours, context: .default)
            var theirs = ByteBuffer()
            elements.map { ByteBuffer(bytes: $0) }.encode(into: &theirs, context: .default)
            #expect(ours == theirs)
            #expect(ByteaArray.psqlType == [ByteBuffer].psqlType)
            #expect(ByteaArray.psqlFormat == [ByteBuffer].psqlFormat)
        }
    }
#endif
