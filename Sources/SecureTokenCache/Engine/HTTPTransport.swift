/// The HTTP stack a ``HTTPTokenEndpointClient`` posts through. Apps plug in their own (a proxy
/// configuration, certificate pinning, another HTTP library) by conforming to it.
public protocol HTTPTransport: Sendable {
    /// POSTs `form` as `application/x-www-form-urlencoded` to `url` and returns the status and
    /// the whole body.
    ///
    /// Throw `TokenCacheError(.network, ...)` when the server could not be reached, the
    /// connection broke before the whole body arrived, or nothing came within `timeout`
    /// seconds. The form holds a refresh token: never log it, never put it in an error.
    func post(url: String, form: [(name: String, value: String)], timeout: Double) async throws -> HTTPTransportResponse
}

/// An HTTP answer: the status code and the body as received.
public struct HTTPTransportResponse: Sendable, Hashable {
    /// The HTTP status code.
    public var status: Int
    /// The body.
    public var body: [UInt8]

    /// An answer with the given parts.
    public init(status: Int, body: [UInt8]) {
        self.status = status
        self.body = body
    }
}

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
