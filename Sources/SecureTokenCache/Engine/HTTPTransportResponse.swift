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
