import Testing

@testable import SecureTokenCache

/// A record's payload as held: a run of an array, shared with it rather than copied.
@Suite(.timeLimit(.minutes(1)))
struct PayloadBytesTests {
    private static func address(_ bytes: ArraySlice<UInt8>) -> UnsafeRawPointer? {
        bytes.withUnsafeBytes { $0.baseAddress }
    }

    @Test func aRunOfAnArrayIsItsBytesInPlace() {
        let block: [UInt8] = Array(0..<64)
        let run = PayloadBytes(block, 10..<20)
        #expect(run.count == 10 && !run.isEmpty)
        #expect(Array(run.slice) == Array(10..<20))
        // Indexed from where the bytes are in the block, as any slice of it is.
        #expect(run.slice.startIndex == 10)
        #expect(Self.address(run.slice) == Self.address(block[10..<20]))
        #expect(run.withUnsafeBytes { Array($0) } == Array(10..<20))
    }

    @Test func aSliceOfAWholeArrayIsSharedAndAPartOfOneIsCopied() {
        let block: [UInt8] = Array(0..<64)
        let whole = PayloadBytes(block[...])
        #expect(Self.address(whole.slice) == Self.address(block[...]))
        let part = PayloadBytes(block[8..<16])
        #expect(Array(part.slice) == Array(8..<16))
        #expect(Self.address(part.slice) != Self.address(block[8..<16]))
    }

    @Test func aRecordsPayloadSetAnewIsHeldAnew() {
        var record = Record(id: RecordID(kind: .accessToken, name: "k"), payload: [1, 2, 3])
        record.payload[record.payload.startIndex] = 9
        #expect(Array(record.payload) == [9, 2, 3])
        #expect(PayloadBytes([]).isEmpty)
    }
}
