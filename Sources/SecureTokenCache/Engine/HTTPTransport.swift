/// The HTTP stack a ``HTTPTokenEndpointClient`` posts through. Apps plug in their own (a proxy
/// configuration, certificate pinning, another HTTP library) by conforming to it.
public protocol HTTPTransport: Sendable {
    /// POSTs `form` as `application/x-www-form-urlencoded` to `url` and returns the status and
    /// the whole body.
    ///
    /// Throw `TokenCacheError(.network, ...)` when the server could not be reached, the
    /// connection broke before the whole body arrived, or nothing came within `timeout`. The
    /// form holds a refresh token: never log it, never put it in an error.
    func post(url: String, form: [(name: String, value: String)], timeout: Duration) async throws -> HTTPTransportResponse
}
