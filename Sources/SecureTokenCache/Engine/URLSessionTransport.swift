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

    /// The transport shared by default token endpoint clients.
    public static let shared = URLSessionTransport()

    public func post(url: String, form: [(name: String, value: String)], timeout: Double) async throws -> HTTPTransportResponse {
        guard let target = URL(string: url), let scheme = target.scheme?.lowercased(), scheme == "https" || scheme == "http" else {
            throw TokenCacheError(.invalidArgument, "the token endpoint is not an http(s) URL")
        }
        var request = URLRequest(url: target, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded;charset=utf-8", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.httpBody = Data(FormEncoding.encode(form))

        let box = TaskBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPTransportResponse, any Error>) in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        // The error's text may hold the URL only; the form (and its token) is never in it.
                        let code = (error as? URLError)?.code
                        let what =
                            switch code {
                            case .timedOut?: "did not answer within \(timeout) s"
                            case .cancelled?: "request was cancelled"
                            case .networkConnectionLost?: "connection broke before the whole answer arrived"
                            case .cannotConnectToHost?, .cannotFindHost?: "could not be reached"
                            default: "request failed (URLError \(code?.rawValue ?? 0))"
                            }
                        continuation.resume(throwing: TokenCacheError(.network, "the token endpoint \(what); check the network and retry"))
                        return
                    }
                    guard let http = response as? HTTPURLResponse else {
                        continuation.resume(throwing: TokenCacheError(.network, "the token endpoint did not answer over HTTP"))
                        return
                    }
                    let body = data.map { Array($0) } ?? []
                    if let expected = http.value(forHTTPHeaderField: "Content-Length").flatMap(Int.init), expected != body.count {
                        continuation.resume(
                            throwing: TokenCacheError(
                                .network, "the token endpoint's answer was cut short (\(body.count) of \(expected) bytes); retry",
                                server: .init(httpStatus: http.statusCode)))
                        return
                    }
                    continuation.resume(returning: HTTPTransportResponse(status: http.statusCode, body: body))
                }
                box.set(task)
                task.resume()
            }
        } onCancel: {
            box.cancel()
        }
    }
}

/// Holds a URLSession task so a cancellation handler can cancel it.
private final class TaskBox: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var task: URLSessionTask?
    private var cancelled = false

    func set(_ task: URLSessionTask) {
        lock.lock()
        self.task = task
        let cancelNow = cancelled
        lock.unlock()
        if cancelNow { task.cancel() }
    }

    func cancel() {
        lock.lock()
        cancelled = true
        let task = self.task
        lock.unlock()
        task?.cancel()
    }
}
