import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The default ``HTTPTransport``: Foundation's `URLSession` (libcurl on Linux), ephemeral (no
/// cookies, no URL cache, no credential storage), with a per-request timeout.
public final class URLSessionTransport: HTTPTransport, @unchecked Sendable {
    // @unchecked: URLSession is thread-safe; the stored properties are immutable.
    private let session: URLSession

    /// A transport over a new ephemeral session.
    public init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.urlCredentialStorage = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
    }

    deinit { session.finishTasksAndInvalidate() }

    /// The hosts plain `http` may be used with.
    static let loopbackHosts: Set<String> = ["127.0.0.1", "localhost", "::1", "[::1]"]

    /// The transport shared by default token endpoint clients.
    public static let shared = URLSessionTransport()

    /// POSTs the form; see ``HTTPTransport/post(url:form:timeout:)``.
    public func post(url: String, form: [(name: String, value: String)], timeout: Duration) async throws -> HTTPTransportResponse
    {
        guard let target = URL(string: url), let scheme = target.scheme?.lowercased(), scheme == "https" || scheme == "http"
        else {
            throw TokenCacheError(.invalidArgument, "the token endpoint is not an http(s) URL")
        }
        // The form carries a refresh token: plain http only to this machine (a local test
        // authority), never across a network.
        if scheme == "http", !Self.loopbackHosts.contains(target.host?.lowercased() ?? "") {
            throw TokenCacheError(
                .invalidArgument, "refusing to send a refresh token over plain http to another machine; use an https authority")
        }
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        var request = URLRequest(url: target, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: seconds)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded;charset=utf-8", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.httpBody = Data(FormEncoding.encode(form))

        let pending = PendingRequest()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPTransportResponse, any Error>) in
                pending.start(continuation)
                let task = session.dataTask(with: request) { data, response, error in
                    pending.finish(Self.outcome(data: data, response: response, error: error, timeout: timeout))
                }
                pending.set(task)
                // libcurl-backed URLSession does not enforce timeoutInterval against a server
                // that accepts the connection and then says nothing: enforce it here.
                DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                    pending.finish(
                        .failure(
                            TokenCacheError(
                                .network,
                                "the token endpoint did not answer within \(timeout.secondsText); check the network and retry")))
                }
                task.resume()
            }
        } onCancel: {
            pending.finish(.failure(TokenCacheError(.network, "the token request was cancelled")))
        }
    }

    private static func outcome(data: Data?, response: URLResponse?, error: (any Error)?, timeout: Duration) -> Result<
        HTTPTransportResponse, any Error
    > {
        if let error {
            // The error's text may hold the URL only; the form (and its token) is never in it.
            let code = (error as? URLError)?.code
            let what =
                switch code {
                case .timedOut?: "did not answer within \(timeout.secondsText)"
                case .cancelled?: "request was cancelled"
                case .networkConnectionLost?: "connection broke before the whole answer arrived"
                case .cannotConnectToHost?, .cannotFindHost?: "could not be reached"
                default: "request failed (URLError \(code?.rawValue ?? 0))"
                }
            return .failure(TokenCacheError(.network, "the token endpoint \(what); check the network and retry"))
        }
        guard let http = response as? HTTPURLResponse else {
            return .failure(TokenCacheError(.network, "the token endpoint did not answer over HTTP"))
        }
        let body = data.map { Array($0) } ?? []
        if let expected = http.value(forHTTPHeaderField: "Content-Length").flatMap(Int.init), expected != body.count {
            return .failure(
                TokenCacheError(
                    .network, "the token endpoint's answer was cut short (\(body.count) of \(expected) bytes); retry",
                    server: .init(httpStatus: http.statusCode)))
        }
        return .success(HTTPTransportResponse(status: http.statusCode, body: body))
    }
}

/// One request in flight: its task and continuation, resumed exactly once by whichever comes
/// first (the answer, the timeout, a cancellation), which also cancels the task.
private final class PendingRequest: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var task: URLSessionTask?
    private var continuation: CheckedContinuation<HTTPTransportResponse, any Error>?
    private var outcome: Result<HTTPTransportResponse, any Error>?

    func start(_ continuation: CheckedContinuation<HTTPTransportResponse, any Error>) {
        lock.lock()
        if let outcome {
            lock.unlock()
            continuation.resume(with: outcome)
            return
        }
        self.continuation = continuation
        lock.unlock()
    }

    func set(_ task: URLSessionTask) {
        lock.lock()
        self.task = task
        let finished = outcome != nil
        lock.unlock()
        if finished { task.cancel() }
    }

    func finish(_ result: Result<HTTPTransportResponse, any Error>) {
        lock.lock()
        guard outcome == nil else {
            lock.unlock()
            return
        }
        outcome = result
        let continuation = self.continuation
        self.continuation = nil
        let task = self.task
        lock.unlock()
        continuation?.resume(with: result)
        if case .failure = result { task?.cancel() }
    }
}
