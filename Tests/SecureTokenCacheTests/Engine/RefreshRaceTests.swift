import Synchronization
import Testing

@testable import SecureTokenCache

/// A refresh whose answer arrives after the user was signed out, wiped or cleared stores
/// nothing: the sign-out wins, and the account does not come back.
@Suite(.timeLimit(.minutes(1))) struct RefreshRaceTests {
    /// A token endpoint that answers a refresh only when the test opens its gate, so that the
    /// test can act while the request is in flight.
    final class GatedEndpoint: TokenEndpointClient {
        private let state = Mutex<(requests: Int, gate: CheckedContinuation<Void, Never>?, open: Bool)>((0, nil, false))

        var requests: Int { state.withLock { $0.requests } }

        /// Lets the request in flight (and every later one) through.
        func open() {
            let waiting = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.open = true
                defer { state.gate = nil }
                return state.gate
            }
            waiting?.resume()
        }

        func redeem(refreshToken: String, clientId: String, scopes: Scopes, endpoint: String, timeout: Duration) async throws
            -> TokenResponse
        {
            await withCheckedContinuation { continuation in
                let proceed = state.withLock { state -> Bool in
                    state.requests += 1
                    if state.open { return true }
                    state.gate = continuation
                    return false
                }
                if proceed { continuation.resume() }
            }
            return try Fixtures.response(accessToken: "at-refreshed", refreshToken: "rt-refreshed")
        }
    }

    enum Race: String, CaseIterable {
        /// Nothing happens while the refresh is in flight: its answer is stored (the control).
        case none
        /// This client signs out (the family refresh token, if any, stays for other clients).
        case signOut
        /// The user is removed from every client.
        case wipe
        /// An administrator clears the group.
        case clearAll
    }

    @Test(arguments: Race.allCases)
    func aRefreshThatRacesASignOutNeverBringsTheAccountBack(race: Race) async throws {
        let group = try Fixtures.group()
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        try cache.store(try Fixtures.response(), for: try Fixtures.request())
        let account = try #require(try cache.accounts().first)
        let endpoint = GatedEndpoint()
        let refresh = Task {
            try await cache.acquireTokenSilently(
                scopes: ["User.Read"], account: account, authority: try Authority("https://login.microsoftonline.com/common"),
                forceRefresh: true, endpoint: endpoint)
        }
        while endpoint.requests == 0 { try await Task.sleep(for: .milliseconds(1)) }
        switch race {
        case .none: break
        case .signOut: try cache.signOut(account)
        case .wipe: try group.wipe(account)
        case .clearAll: try group.clear(.all)
        }
        let before = try group.exportMSAL(includeSecrets: true)
        endpoint.open()
        let outcome = await refresh.result

        if race == .none {
            #expect(try outcome.get().accessToken == "at-refreshed")
            #expect(try cache.accounts().map(\.homeAccountId) == [account.homeAccountId])
            return
        }
        #expect(throws: TokenCacheError.self) { try outcome.get() }
        #expect((outcome.error as? TokenCacheError)?.code == .interactionRequired)
        #expect(try group.exportMSAL(includeSecrets: true) == before, "the answer must not be stored")
        #expect(try cache.accounts().isEmpty)
        #expect(try !group.exportMSAL(includeSecrets: true).contains("at-refreshed".utf8))
    }
}

extension Result {
    /// The failure, if any.
    fileprivate var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension Array where Element == UInt8 {
    /// Whether `bytes` occur in this array.
    fileprivate func contains(_ bytes: String.UTF8View) -> Bool {
        let needle = Array(bytes)
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { self[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
