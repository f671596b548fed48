/// Base64url decoding (RFC 4648 §5), padding optional, as JWTs and `client_info` use it.
enum Base64URL {
    private static let table: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (value, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8.enumerated() {
            table[Int(character)] = Int8(value)
        }
        // Accept the standard alphabet too: some servers send it.
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        return table
    }()

    /// The decoded bytes, or `nil` when `text` is not base64url.
    static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        var padding = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            guard padding == 0 else { return nil }
            let value = table[Int(byte)]
            guard value >= 0 else { return nil }
            buffer = buffer << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        guard bits < 6, padding <= 2 else { return nil }
        return output
    }

    /// `bytes` in base64url without padding.
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                output.append(alphabet[Int((buffer >> UInt32(bits)) & 0x3F)])
            }
        }
        if bits > 0 { output.append(alphabet[Int((buffer << UInt32(6 - bits)) & 0x3F)]) }
        return String(decoding: output, as: UTF8.self)
    }
}
