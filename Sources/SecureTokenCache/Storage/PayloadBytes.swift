/// A record's payload: a run of bytes in an array that may hold other records' payloads too (a
/// sealed batch's plaintext, a document's payload block).
///
/// Held as the array and two 32-bit offsets into it, half what an `ArraySlice` takes: a large
/// group holds one for every record in its store and one for every entry in its index.
struct PayloadBytes: Sendable {
    private let storage: [UInt8]
    private let start: UInt32
    private let end: UInt32

    /// All of `bytes`.
    init(_ bytes: [UInt8]) {
        self.init(bytes, bytes.indices)
    }

    /// The bytes of `slice`: its array's when it spans all of it (`Array` does not copy such a
    /// slice), else a copy.
    init(_ slice: ArraySlice<UInt8>) {
        let array = Array(slice)
        self.init(array, array.indices)
    }

    /// The bytes of `array` in `range`, shared. A payload never exceeds 4 GiB (``RecordSealer`` refuses
    /// one that does); one that ends past 4 GiB into its array is copied out of it.
    init(_ array: [UInt8], _ range: Range<Int>) {
        if range.upperBound <= Int(UInt32.max) {
            storage = array
            start = UInt32(range.lowerBound)
            end = UInt32(range.upperBound)
        } else {
            storage = Array(array[range])
            start = 0
            end = UInt32(range.count)
        }
    }

    /// The bytes, indexed from their place in the array (index from `startIndex`, never from 0).
    var slice: ArraySlice<UInt8> { storage[Int(start)..<Int(end)] }

    /// The number of bytes.
    var count: Int { Int(end &- start) }

    /// Whether there are none.
    var isEmpty: Bool { start == end }

    /// `read` with the bytes, in place.
    func withUnsafeBytes<Result>(_ read: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBytes { try read(UnsafeRawBufferPointer(rebasing: $0[Int(start)..<Int(end)])) }
    }
}
