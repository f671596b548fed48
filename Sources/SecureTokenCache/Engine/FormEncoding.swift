/// `application/x-www-form-urlencoded` (the WHATWG URL standard's, with `%20` for space).
enum FormEncoding {
    static func encode(_ form: [(name: String, value: String)]) -> [UInt8] {
        var output: [UInt8] = []
        for (position, field) in form.enumerated() {
            if position > 0 { output.append(UInt8(ascii: "&")) }
            append(field.name, to: &output)
            output.append(UInt8(ascii: "="))
            append(field.value, to: &output)
        }
        return output
    }

    private static func append(_ text: String, to output: inout [UInt8]) {
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                output.append(byte)
            default:
                output.append(UInt8(ascii: "%"))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0xF)])
            }
        }
    }
}
