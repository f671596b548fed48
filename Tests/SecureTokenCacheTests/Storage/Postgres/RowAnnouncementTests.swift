#if canImport(SecureTokenCachePostgres)
    import Testing

    @testable import SecureTokenCache
    @testable import SecureTokenCachePostgres

    /// How a listener reads a commit's announcement (``PostgresRowDatabase/announcement(_:)``):
    /// `<group>:<generation>[:<partition>,...]`, each name in hexadecimal as PostgreSQL's
    /// `encode(..., 'hex')` and the commit statement write it. No server needed.
    @Suite(.timeLimit(.minutes(1)))
    struct RowAnnouncementTests {
        static let group: [UInt8] = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 5) }
        static let partitions: [[UInt8]] = [Array(repeating: 0x00, count: 32), Array(repeating: 0xFF, count: 32), [0x0A, 0xB0]]

        static func hex(_ bytes: [UInt8]) -> String {
            bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        }

        /// The parts of `announcement`, or `nil` for a resynchronisation or no announcement.
        static func parts(_ announcement: RowAnnouncement?) -> (group: [UInt8], generation: UInt64, partitions: [[UInt8]]?)? {
            guard case .committed(let group, let generation, let partitions) = announcement else { return nil }
            return (group, generation, partitions)
        }

        @Test func aCommitNamingItsPartitionsIsReadWhole() throws {
            let payload = "\(Self.hex(Self.group)):18446744073709551615:" + Self.partitions.map(Self.hex).joined(separator: ",")
            let read = try #require(Self.parts(PostgresRowDatabase.announcement(payload)))
            #expect(read.group == Self.group)
            #expect(read.generation == UInt64.max)
            #expect(read.partitions == Self.partitions)
        }

        /// No third field: the commit touched rows of no partition or too many to name, so every
        /// reader must look. An empty third field: it touched none.
        @Test func withoutPartitionsAndWithNone() throws {
            let unnamed = try #require(Self.parts(PostgresRowDatabase.announcement("\(Self.hex(Self.group)):7")))
            #expect(unnamed.group == Self.group && unnamed.generation == 7 && unnamed.partitions == nil)
            let none = try #require(Self.parts(PostgresRowDatabase.announcement("\(Self.hex(Self.group)):7:")))
            #expect(none.partitions == [])
        }

        @Test func upperCaseDigitsAreRead() throws {
            let read = try #require(Self.parts(PostgresRowDatabase.announcement("0AFf:1:C0DE")))
            #expect(read.group == [0x0A, 0xFF] && read.partitions == [[0xC0, 0xDE]])
        }

        /// Anything else is no announcement of ours: the listener ignores it.
        @Test(arguments: [
            "", "abcd", "abcd:", "abc:1", "abcg:1", "ab:cd", "ab:-1", "ab:1:2:3", "ab:1:abc", "ab:1:ab,zz",
            "ab:18446744073709551616", "ab: 1",
        ])
        func malformedPayloadsAreNoAnnouncement(_ payload: String) {
            #expect(Self.parts(PostgresRowDatabase.announcement(payload)) == nil)
        }
    }
#endif
