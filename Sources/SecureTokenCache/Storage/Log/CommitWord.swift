/// The published end of a group's log: which log file (its epoch) and how many bytes of it are
/// committed, packed into one 64-bit word so readers load both atomically.
///
/// Bits 0-39: committed length (up to 1 TiB); bits 40-55: log epoch; bits 56-63: a CRC-8 of the
/// other seven bytes. The check makes any damaged byte of the word detectable, so a flipped bit
/// can never make a reader believe the log is shorter (a silently shortened cache) or longer.
struct CommitWord: Sendable, Equatable {
    /// The epoch of the current log file; changes on every compaction (wrapping).
    var epoch: UInt16
    /// The committed length of that log file in bytes, header included.
    var length: UInt64

    /// The largest length the word can hold.
    static let maximumLength: UInt64 = (1 << 40) - 1

    /// A word for `epoch` and `length`.
    init(epoch: UInt16, length: UInt64) {
        precondition(length <= Self.maximumLength)
        self.epoch = epoch
        self.length = length
    }

    /// Decodes a raw word, or returns `nil` if its check byte does not match.
    init?(raw: UInt64) {
        let body = raw & 0x00FF_FFFF_FFFF_FFFF
        guard UInt8(truncatingIfNeeded: raw >> 56) == Self.crc8(body) else { return nil }
        epoch = UInt16(truncatingIfNeeded: body >> 40)
        length = body & Self.maximumLength
    }

    /// The packed word.
    var raw: UInt64 {
        let body = UInt64(epoch) << 40 | length
        return UInt64(Self.crc8(body)) << 56 | body
    }

    /// CRC-8 (polynomial 0x07, initial value 0xFF so an all-zero word is invalid) over the low
    /// seven bytes. A CRC of degree 8 detects every error burst of up to 8 bits, so every
    /// single-byte change.
    static func crc8(_ body: UInt64) -> UInt8 {
        var crc: UInt8 = 0xFF
        for index in 0..<7 {
            crc ^= UInt8(truncatingIfNeeded: body >> (8 * UInt64(index)))
            for _ in 0..<8 { crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x07 : crc << 1 }
        }
        return crc
    }
}
