/// A 16-byte keyed hash (BLAKE2b under a subkey of the group key) of a record name.
///
/// Records sealed on their own (the format older versions wrote) carry it in the clear, bound
/// into their associated data and checked against the name when they open: record names are MSAL
/// cache keys, which contain user and tenant ids, so the tag identified a record without
/// revealing it. Sealed batches need none: their box authenticates every name inside it.
struct NameTag: Hashable, Sendable {
    /// The tag's 16 bytes as two little-endian words.
    var low: UInt64
    /// See ``low``.
    var high: UInt64

    /// The length of a tag in bytes.
    static let byteCount = 16

    /// The tag stored at `bytes` (16 bytes, little-endian).
    init(_ bytes: UnsafeRawBufferPointer) {
        low = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        high = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    }

    /// Appends the tag's 16 bytes to `output`.
    func append(to output: inout [UInt8]) {
        withUnsafeBytes(of: low.littleEndian) { output.append(contentsOf: $0) }
        withUnsafeBytes(of: high.littleEndian) { output.append(contentsOf: $0) }
    }
}
