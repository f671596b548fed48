extension String {
    /// UTF-8 bytes as a string, or `nil` when they are not valid UTF-8. ASCII (ids, keys, hosts)
    /// needs no validation, and skipping the generic `String(validating:)` matters per record.
    static func validUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var bits: UInt8 = 0
        for byte in bytes { bits |= byte }
        if bits < 0x80 { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }

    /// `lowercased()` without the copy for the text a cache holds: ids, hosts, tenants and
    /// scopes are ASCII and usually lower-case already, so this returns `self` (one retain)
    /// when there is nothing to lower, lowers ASCII in one pass, and leaves anything else to
    /// `lowercased()`.
    var asciiLowercased: String {
        var text = self
        let (upper, ascii) = text.withUTF8 { ASCIICase.scan(UnsafeRawBufferPointer($0)) }
        guard ascii else { return lowercased() }
        guard upper else { return self }
        return text.withUTF8 { bytes in
            String(unsafeUninitializedCapacity: bytes.count) {
                ASCIICase.copyLowered(UnsafeRawBufferPointer(bytes), to: $0.baseAddress!)
                return bytes.count
            }
        }
    }

    /// `parts` joined by `separator` (an ASCII byte) and lower-cased as ``asciiLowercased``
    /// lowers, built in one string in one pass: a cache key is made of several parts on every
    /// write, and joining them first would copy each twice.
    static func asciiLowercased(joining parts: [String], separator: UInt8) -> String {
        var count = Swift.max(0, parts.count - 1)
        for part in parts { count += part.utf8.count }
        var ascii = true
        let joined = String(unsafeUninitializedCapacity: count) { buffer in
            let start = UnsafeMutableRawPointer(buffer.baseAddress!)
            var position = 0
            for index in parts.indices {
                if index > 0 {
                    start.storeBytes(of: separator, toByteOffset: position, as: UInt8.self)
                    position += 1
                }
                var part = parts[index]
                position += part.withUTF8 { bytes in
                    if let source = bytes.baseAddress { (start + position).copyMemory(from: source, byteCount: bytes.count) }
                    return bytes.count
                }
            }
            let joined = UnsafeRawBufferPointer(start: start, count: position)
            ascii = ASCIICase.scan(joined).ascii
            ASCIICase.copyLowered(joined, to: buffer.baseAddress!)
            return position
        }
        return ascii ? joined : parts.joined(separator: String(UnicodeScalar(separator))).lowercased()
    }

    /// The text after the last `separator` byte, or `nil` when there is none.
    func suffix(afterLast separator: UInt8) -> Substring? {
        guard let position = lastUTF8Index(of: separator) else { return nil }
        return self[utf8.index(after: position)...]
    }

    /// The text before the last `separator` byte, or `nil` when there is none.
    func prefix(beforeLast separator: UInt8) -> Substring? {
        guard let position = lastUTF8Index(of: separator) else { return nil }
        return self[..<position]
    }

    /// The index of the last `byte` in the UTF-8 form: a scan of contiguous bytes, not the
    /// generic collection algorithm (several hundred instructions per call on a 73-byte id).
    private func lastUTF8Index(of byte: UInt8) -> String.Index? {
        let offset = utf8.withContiguousStorageIfAvailable { bytes -> Int? in
            var position = bytes.count
            while position > 0 {
                position -= 1
                if bytes[position] == byte { return position }
            }
            return nil
        }
        guard let offset else { return utf8.lastIndex(of: byte) }
        return offset.map { utf8.index(utf8.startIndex, offsetBy: $0) }
    }
}

/// ASCII letter case, eight bytes at a time: the lower-casing of keys that every write and every
/// lookup by name does.
private enum ASCIICase {
    /// The high bit of each byte of `word` that is an ASCII upper-case letter.
    @inline(__always)
    static func upperCaseBits(_ word: UInt64) -> UInt64 {
        // Below 0x80, byte + 0x3F reaches the high bit from "A" on and byte + 0x25 from past
        // "Z" on, and neither carries into the next byte.
        let low = word & 0x7F7F_7F7F_7F7F_7F7F
        let fromA = low &+ 0x3F3F_3F3F_3F3F_3F3F
        let pastZ = low &+ 0x2525_2525_2525_2525
        return fromA & ~pastZ & ~word & WordBytes.high
    }

    /// Whether `bytes` hold an upper-case ASCII letter, and whether they are all ASCII.
    static func scan(_ bytes: UnsafeRawBufferPointer) -> (upper: Bool, ascii: Bool) {
        var upper: UInt64 = 0
        var all: UInt64 = 0
        var offset = 0
        while bytes.count - offset >= 8 {
            let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            all |= word
            upper |= upperCaseBits(word)
            offset += 8
        }
        let last = WordBytes.load(bytes, at: offset)
        all |= last
        upper |= upperCaseBits(last)
        return (upper != 0, all & WordBytes.high == 0)
    }

    /// Copies `bytes` to `destination` with ASCII upper-case letters lowered (every other byte
    /// as it is).
    static func copyLowered(_ bytes: UnsafeRawBufferPointer, to destination: UnsafeMutablePointer<UInt8>) {
        let target = UnsafeMutableRawPointer(destination)
        var offset = 0
        // The case bit of a letter is 0x20: the high bit of its byte shifted right by two.
        while bytes.count - offset >= 8 {
            let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            target.storeBytes(of: word | upperCaseBits(word) >> 2, toByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        var last = WordBytes.load(bytes, at: offset)
        last |= upperCaseBits(last) >> 2
        while offset < bytes.count {
            target.storeBytes(of: UInt8(truncatingIfNeeded: last), toByteOffset: offset, as: UInt8.self)
            last >>= 8
            offset += 1
        }
    }
}

/// Hexadecimal digits as bytes: a JSON `\u` escape's and a PostgreSQL announcement's.
package enum HexDigit {
    /// The value of one hexadecimal digit, in either case; `nil` for any other byte.
    @inline(__always)
    package static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
