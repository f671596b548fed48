import Foundation
import Testing

@testable import SecureTokenCache

/// The token endpoint client's mapping of HTTP answers, and the refresh lock's files.
@Suite(.timeLimit(.minutes(1))) struct SilentEndpointTests {
    func answer(_ status: Int, _ body: String) -> HTTPTransportResponse {
        HTTPTransportResponse(status: status, body: Array(body.utf8))
    }

    func error(_ status: Int, _ body: String) -> TokenCacheError? {
        do {
            _ = try HTTPTokenEndpointClient.interpret(answer(status, body))
            return nil
        } catch {
            return error as? TokenCacheError
        }
    }

    @Test func invalidGrantAndInteractionRequiredMeanInteraction() {
        for code in ["invalid_grant", "interaction_required"] {
            let failure = error(400, #"{"error":"\#(code)","suberror":"consent_required","correlation_id":"c-1"}"#)
            #expect(failure?.code == .interactionRequired)
            #expect(failure?.server == .init(error: code, suberror: "consent_required", correlationId: "c-1", httpStatus: 400))
        }
    }

    @Test func otherAnswersAreClassified() {
        #expect(error(400, #"{"error":"invalid_client"}"#)?.code == .serverError)
        #expect(error(503, #"{"error":"temporarily_unavailable"}"#)?.server?.httpStatus == 503)
        #expect(error(500, "<html>")?.code == .serverError)
        #expect(error(200, "not json")?.code == .serverError)
        #expect(error(200, #"{"token_type":"Bearer"}"#)?.code == .malformedResponse)
        #expect(error(200, #"{"error":"invalid_grant"}"#)?.code == .interactionRequired)
        #expect(error(200, #"{"access_token":"x","expires_in":60}"#) == nil)
    }

    @Test func plainHTTPIsRefusedExceptToThisMachine() async throws {
        let error = await #expect(throws: TokenCacheError.self) {
            try await URLSessionTransport.shared.post(
                url: "http://login.example.com/common/oauth2/v2.0/token", form: [("refresh_token", "rt")], timeout: .seconds(1))
        }
        #expect(error?.code == .invalidArgument)
        // Loopback is allowed (nothing listens on port 9: a network error, not a refusal).
        let local = await #expect(throws: TokenCacheError.self) {
            try await URLSessionTransport.shared.post(url: "http://127.0.0.1:9/t", form: [], timeout: .seconds(1))
        }
        #expect(local?.code == .network)
    }

    @Test func theFormIsEncodedAsRFC6749Says() {
        let bytes = FormEncoding.encode([
            ("grant_type", "refresh_token"), ("scope", "User.Read openid"), ("refresh_token", "a+b/c=&d"),
        ])
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == "grant_type=refresh_token&scope=User.Read%20openid&refresh_token=a%2Bb%2Fc%3D%26d")
    }

    /// A transport that records what it was asked to send.
    final class RecordingTransport: HTTPTransport, @unchecked Sendable {
        let lock = NSLock()
        var forms: [[(name: String, value: String)]] = []
        func post(url: String, form: [(name: String, value: String)], timeout: Duration) async throws -> HTTPTransportResponse {
            lock.withLock { forms.append(form) }
            return HTTPTransportResponse(status: 400, body: Array(#"{"error":"invalid_grant"}"#.utf8))
        }
    }

    @Test func theRequestAsksForClientInfoAndTheOIDCScopes() async throws {
        let transport = RecordingTransport()
        let client = HTTPTokenEndpointClient(transport: transport)
        await #expect(throws: TokenCacheError.self) {
            try await client.redeem(
                refreshToken: "rt", clientId: "app", scopes: ["User.Read"], endpoint: "https://example.invalid/t",
                timeout: .seconds(1))
        }
        let form = Dictionary(uniqueKeysWithValues: try #require(transport.forms.first).map { ($0.name, $0.value) })
        #expect(form["grant_type"] == "refresh_token")
        #expect(form["client_info"] == "1")
        #expect(Set((form["scope"] ?? "").split(separator: " ")) == ["User.Read", "offline_access", "openid", "profile"])
    }

    @Test func aTaskWaitingBehindAStuckHolderGivesUp() async throws {
        let lock = RefreshLock()
        let (entered, signal) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await lock.withLock(group: "silent-inprocess-test", directory: nil, key: "k", timeout: .seconds(5)) {
                signal.yield()
                // Held until the waiter has given up (cancelled below), however slow a loaded
                // machine makes the waiter's 0.2 s timer.
                try? await Task.sleep(nanoseconds: 60_000_000_000)
                return 1
            }
        }
        for await _ in entered { break }
        let waited = await #expect(throws: TokenCacheError.self) {
            try await lock.withLock(group: "silent-inprocess-test", directory: nil, key: "k", timeout: .milliseconds(200)) { 2 }
        }
        #expect(waited?.code == .lockTimeout)
        holder.cancel()
        #expect(try await holder.value == 1)
        // Released: the next caller gets in at once.
        #expect(
            try await lock.withLock(group: "silent-inprocess-test", directory: nil, key: "k", timeout: .milliseconds(200)) { 3 }
                == 3)
    }

    @Test func lockFilesArePrivateAndNameNoUser() async throws {
        let folder = TemporaryDirectory()
        let directory = try GroupDirectory(root: folder.path, name: "silent-lock-test")
        try directory.createIfNeeded()
        try await RefreshLock().withLock(
            group: directory.name, directory: directory, key: "alice.tenant\nfamily:1", timeout: .seconds(1)
        ) {
            let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(files.count == 1)
            #expect(files.allSatisfy { $0.hasPrefix("refresh-") && !$0.contains("alice") })
            for file in files {
                let mode = try FileManager.default.attributesOfItem(atPath: directory.file(file))[.posixPermissions] as? Int
                #expect(mode == 0o600)
            }
            // A second holder of the same key (another lock table: as another process) waits,
            // then times out naming this process.
            let error = await #expect(throws: TokenCacheError.self) {
                try await RefreshLock().withLock(
                    group: directory.name, directory: directory, key: "alice.tenant\nfamily:1", timeout: .milliseconds(200)
                ) {}
            }
            #expect(error?.code == .lockTimeout)
            #expect(error?.message.contains("pid \(getpid())") == true)
        }
    }
}
