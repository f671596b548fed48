import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SecureTokenCache

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `Tests/Support/fake_authority.py` run as a child process on 127.0.0.1, and a client for
/// its control endpoints.
final class FakeAuthority: Sendable {
    static let familyClients = [Fixtures.clientA, Fixtures.clientB]
    static let script = PackageRoot.url.appendingPathComponent("Tests/Support/fake_authority.py").path

    private let process: Process
    private let input: Pipe
    let port: Int

    /// Starts the fake authority; its first stdout line is its port.
    init(familyClients: [String] = FakeAuthority.familyClients) throws {
        let process = Process()
        let python = ProcessInfo.processInfo.environment["STC_PYTHON"] ?? "python3"
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [python, Self.script, "--exit-on-stdin-eof"] + familyClients.flatMap { ["--family-client", $0] }
        let output = Pipe()
        process.standardOutput = output
        // Never share the test runner's stdout/stderr: a child holding them open would keep
        // `swift test` waiting for EOF.
        process.standardError = FileHandle.nullDevice
        // The script exits when this pipe closes: when the authority is released, or when the
        // test runner dies.
        let input = Pipe()
        process.standardInput = input
        try process.run()
        var line: [UInt8] = []
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.kill()
            throw TokenCacheError(.ioFailure, "the fake authority did not print its port")
        }
        self.process = process
        self.input = input
        self.port = port
    }

    deinit {
        // Closing stdin stops the script even behind a launcher (pyenv's shim) that a signal
        // to `process` would not reach; the signal stops it where another child holds the pipe.
        try? input.fileHandleForWriting.close()
        process.kill()
    }

    var base: String { "http://127.0.0.1:\(port)" }

    func authority(_ tenant: String = "common") throws -> Authority { try Authority("\(base)/\(tenant)") }

    /// Sets the behaviour of the following token requests (see the script's doc string).
    func control(_ behaviour: [String: Any]) async throws {
        _ = try await Self.send("POST", base + "/control", body: try JSONSerialization.data(withJSONObject: behaviour))
    }

    /// Token requests received, by "<client id> <grant type>".
    func stats() async throws -> [String: Int] {
        let (_, body) = try await Self.send("GET", base + "/stats", body: nil)
        let object = try JSONSerialization.jsonObject(with: body) as? [String: Any]
        return (object?["requests"] as? [String: Int]) ?? [:]
    }

    /// Refresh-token requests received from `client`.
    func refreshRequests(_ client: String) async throws -> Int {
        try await stats()["\(client.lowercased()) refresh_token"] ?? 0
    }

    /// Every refresh-token request received.
    func allRefreshRequests() async throws -> Int {
        try await stats().filter { $0.key.hasSuffix(" refresh_token") }.values.reduce(0, +)
    }

    /// What an interactive sign-in of `username` in `client` ends with: a full token response.
    func signInResponse(client: String, username: String = "alice@contoso.com", refreshIn: Int? = nil) async throws
        -> TokenResponse
    {
        var request: [String: Any] = [
            "client_id": client, "username": username, "scope": "User.Read openid profile offline_access",
        ]
        if let refreshIn { request["refresh_in"] = refreshIn }
        let (_, body) = try await Self.send("POST", base + "/signin", body: try JSONSerialization.data(withJSONObject: request))
        return try TokenResponse(json: Array(body))
    }

    /// Signs `username` in to `cache` as an interactive flow would, and returns the account.
    @discardableResult
    func signIn(_ cache: TokenCache, username: String = "alice@contoso.com", refreshIn: Int? = nil) async throws -> Account {
        let response = try await signInResponse(client: cache.clientId, username: username, refreshIn: refreshIn)
        let request = TokenRequest(
            clientId: cache.clientId, authority: try authority(), scopes: ["User.Read"], grantType: "authorization_code")
        try cache.store(response, for: request, signIn: true)
        return try #require(try cache.account(username: username))
    }

    private static func send(_ method: String, _ url: String, body: Data?) async throws -> (Int, Data) {
        var request = URLRequest(url: URL(string: url)!, timeoutInterval: 10)
        request.httpMethod = method
        request.httpBody = body
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        return try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else {
                    continuation.resume(returning: ((response as? HTTPURLResponse)?.statusCode ?? 0, data ?? Data()))
                }
            }.resume()
        }
    }
}
