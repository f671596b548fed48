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
        let lowered = utf8.withContiguousStorageIfAvailable { bytes -> String? in
            var upper = false
            for byte in bytes {
                if byte >= 0x80 { return nil }
                if byte &- UInt8(ascii: "A") < 26 { upper = true }
            }
            guard upper else { return self }
            return String(unsafeUninitializedCapacity: bytes.count) { buffer in
                for (position, byte) in bytes.enumerated() {
                    buffer[position] = byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
                }
                return bytes.count
            }
        }
        return (lowered ?? nil) ?? lowercased()
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
