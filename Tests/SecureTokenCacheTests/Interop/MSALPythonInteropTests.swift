import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

/// The interop proof against real msal-python 1.39.0: caches built with msal's own API
/// (`TokenCache.add` and application flows against a fake token endpoint on 127.0.0.1) are
/// imported, answered, exported byte for byte, and the engine's export is read back by msal-python
/// with cache hits and no network call. One Python run builds every cache (`MSALPython.built()`).
@Suite(.tags(.multiProcess), .timeLimit(.minutes(3))) struct MSALPythonInteropTests {
    static let addCaches = ["add_users", "add_adfs", "add_app_only"]

    @Test(arguments: MSALPython.cacheNames)
    func importThenExportIsByteIdentical(name: String) throws {
        let cache = try MSALPython.built().cache(name)
        let original = try cache.bytes()
        let group = try Fixtures.group()
        try group.importMSAL(original)
        let exported = try group.exportMSAL(includeSecrets: true)
        #expect(exported == original, "export of msal-python's \(name) differs from its serialize() bytes")
    }

    @Test(arguments: MSALPython.cacheNames)
    func engineAnswersTheLookupsMsalPythonAnswers(name: String) throws {
        let built = try MSALPython.built()
        let cache = try built.cache(name)
        let group = try Fixtures.group(now: built.now(cache))
        try group.importMSAL(try cache.bytes())
        for lookup in cache.lookups {
            let answer = try lookup.engineAnswer(in: group, now: built.now(cache))
            let why = lookup.engine.map { " (differs from msal-python by \($0.rule))" } ?? ""
            if lookup.kind == "accounts" {
                #expect(answer.usernames == lookup.expectedUsernames, "\(name)/\(lookup.id)\(why)")
            } else {
                #expect(answer.secret == lookup.expectedSecret, "\(name)/\(lookup.id)\(why)")
            }
        }
    }

    /// Every access token msal-python wrote is found by at least one lookup: no entry is
    /// unreachable through the queries msal-python itself answers with it. (A token granted only
    /// OIDC scopes, such as ADFS's `openid profile`, cannot be asked for: msal rejects reserved
    /// scopes in a request.)
    @Test(arguments: MSALPython.cacheNames)
    func everyAccessTokenIsFoundByAQueryMsalPythonAnswersWithIt(name: String) throws {
        let built = try MSALPython.built()
        let cache = try built.cache(name)
        let group = try Fixtures.group(now: built.now(cache))
        try group.importMSAL(try cache.bytes())
        var answered = Set<String>()
        for lookup in cache.lookups where lookup.msal?.secret != nil {
            let answer = try lookup.engineAnswer(in: group, now: built.now(cache))
            if lookup.engine == nil, let secret = answer.secret { answered.insert(secret) }
        }
        let now = built.now(cache)
        let live = try group.index().documentOrder().compactMap { stored -> String? in
            guard case .accessToken(let token) = stored.entry, !token.isExpired(at: now), !token.scopes.isEmptyForMatching else {
                return nil
            }
            return token.secret
        }
        #expect(
            Set(live).subtracting(answered).isEmpty,
            "\(name): tokens no msal-python query finds in the engine: \(Set(live).subtracting(answered).sorted())")
    }

    /// Unknown fields other SDKs write (any JSON) are written back exactly as msal-python's
    /// `json.dumps(..., indent=4)` writes them: numbers, escapes, surrogate pairs, nesting.
    @Test func unknownFieldsAreWrittenAsMsalPythonWritesThem() throws {
        for roundTrip in try MSALPython.built().jsonRoundTrips {
            let written = JSONWriter.bytes(try JSONParser.parse(roundTrip.input), style: .python)
            #expect(String(decoding: written, as: UTF8.self) == roundTrip.output, "\(roundTrip.input)")
        }
    }

    /// The engine ingests the very token responses msal-python's `add()` got (same request,
    /// same clock) and exports exactly the bytes msal-python serialized.
    @Test(arguments: addCaches)
    func ingestOfMsalPythonsResponsesExportsItsBytes(name: String) throws {
        let cache = try MSALPython.built().cache(name)
        let events = try #require(cache.events)
        let clock = TestClock(0)
        let group = try CacheGroup(name: "replay", store: MemoryStore(name: "replay"), clock: clock.closure)
        for recorded in events {
            guard case .object(let event)? = recorded["event"], let now = recorded.seconds("now"),
                case .object(let responseFields)? = event["response"], let client = event.string("client_id"),
                let environment = event.string("environment"), let endpoint = event.string("token_endpoint")
            else {
                Issue.record("an event of \(name) lacks a part")
                continue
            }
            clock.now = now
            let tenant = try Authority(endpoint).tenant
            var scopes: [String] = []
            if case .array(let values)? = event["scope"] { scopes = values.compactMap(\.stringValue) }
            var keyId: String?
            if case .object(let data)? = event["data"] { keyId = data.string("key_id") }
            let grant = event.string("grant_type")
            let request = TokenRequest(
                clientId: client, authority: try Authority("https://\(environment)/\(tenant)"), scopes: Scopes(scopes),
                grantType: grant, keyId: keyId)
            try TokenCache(clientId: client, group: group).store(
                try TokenResponse(fields: responseFields), for: request,
                signIn: grant.map(Ingest.accountEstablishingGrants.contains) ?? false)
        }
        let exported = try group.exportMSAL(includeSecrets: true)
        let original = try cache.bytes()
        #expect(
            exported == original,
            "engine ingest of \(name)'s responses differs from msal-python:\n\(String(decoding: exported, as: UTF8.self))")
    }

    /// msal-python deserializes the engine's export (of every msal-built cache, after the engine
    /// wrote tokens into it) and gets cache hits from `acquire_token_silent` with no network call.
    @Test func msalPythonReadsTheEngineExportWithoutNetwork() throws {
        let built = try MSALPython.built()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stc-export-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        var entries: [MSALPython.ConsumeEntry] = []
        var expected: [String: [String: MSALPython.Lookup.MSALAnswer]] = [:]
        for cache in built.caches {
            let group = try Fixtures.group(now: built.now(cache))
            try group.importMSAL(try cache.bytes())
            var lookups = cache.lookups
            if cache.name == "add_users" {
                // A read-modify-write: the engine stores a new token for Alice in msal's cache.
                let response = try Fixtures.response(
                    accessToken: "at-engine-alice-tasks", refreshToken: "rt-engine-alice", scope: "Tasks.Read openid profile")
                let request = TokenRequest(
                    clientId: Fixtures.clientA, authority: try Authority("https://login.microsoftonline.com/\(Fixtures.tenant)"),
                    scopes: ["Tasks.Read"], grantType: "refresh_token")
                try TokenCache(clientId: Fixtures.clientA, group: group).store(response, for: request, signIn: false)
                lookups.append(
                    MSALPython.Lookup(
                        id: "engine-alice-tasks", kind: "silent", client_id: Fixtures.clientA,
                        authority: "https://login.microsoftonline.com/\(Fixtures.tenant)", scopes: ["Tasks.Read"],
                        username: "alice@contoso.com",
                        msal: .init(secret: "at-engine-alice-tasks", network_calls: 0)))
            }
            let path = directory.appendingPathComponent("\(cache.name).json")
            try Data(try group.exportMSAL(includeSecrets: true)).write(to: path)
            entries.append(.init(name: cache.name, path: path.path, lookups: lookups, frozen_now: cache.frozenNow))
            expected[cache.name] = Dictionary(uniqueKeysWithValues: lookups.compactMap { l in l.msal.map { (l.id, $0) } })
        }

        // A cache only the engine wrote: users sign in (one with a family refresh token), an
        // app-only token, an ssh-cert.
        let home = "https://login.microsoftonline.com/\(Fixtures.tenant)"
        let group = try Fixtures.group(now: built.now)
        let b = try TokenCache(clientId: Fixtures.clientB, group: group)
        let ivanId = "00000000-0000-0000-aaaa-00000000000a"
        try b.store(
            try Fixtures.response(
                uid: ivanId, username: "Ivan@Contoso.com", accessToken: "at-engine-ivan", refreshToken: "rt-engine-ivan",
                scope: "User.Read Mail.Send openid profile"),
            for: try Fixtures.request(client: Fixtures.clientB, authority: home, scopes: ["User.Read", "Mail.Send"]))
        try TokenCache(clientId: Fixtures.clientA, group: group).store(
            try Fixtures.response(
                uid: "00000000-0000-0000-bbbb-00000000000b", username: "Judy@Contoso.com", accessToken: "at-engine-judy",
                refreshToken: "frt-engine-judy", scope: "User.Read openid profile", foci: "1"),
            for: try Fixtures.request(client: Fixtures.clientA, authority: home))
        let pas = "https://pas.windows.net/CheckMyAccess/Linux/.default"
        try b.store(
            try TokenResponse(fields: [
                "token_type": .string("ssh-cert"), "access_token": .string("ssh-engine-ivan"), "expires_in": .number("3600"),
                "scope": .string(pas), "client_info": .string(Fixtures.clientInfo(uid: ivanId, utid: Fixtures.tenant)),
            ]),
            for: TokenRequest(clientId: Fixtures.clientB, authority: try Authority(home), scopes: [pas], keyId: "key-ivan"),
            signIn: false)
        let daemon = "55555555-aaaa-4bbb-8ccc-000000000005"
        try TokenCache(clientId: daemon, group: group).store(
            try TokenResponse(fields: ["access_token": .string("at-engine-daemon"), "expires_in": .number("3599")]),
            for: TokenRequest(
                clientId: daemon, authority: try Authority(home), scopes: ["https://graph.microsoft.com/.default"],
                grantType: "client_credentials"),
            signIn: false)
        let path = directory.appendingPathComponent("engine_written.json")
        try Data(try group.exportMSAL(includeSecrets: true)).write(to: path)
        typealias Lookup = MSALPython.Lookup
        let written = [
            Lookup(
                id: "engine-ivan", kind: "silent", client_id: Fixtures.clientB, authority: home, scopes: ["Mail.Send"],
                username: "ivan@contoso.com", msal: .init(secret: "at-engine-ivan", network_calls: 0)),
            Lookup(
                id: "engine-accounts", kind: "accounts", client_id: Fixtures.clientB, authority: home,
                msal: .init(network_calls: 0, usernames: ["Ivan@Contoso.com", "Judy@Contoso.com"])),
            Lookup(
                id: "engine-ivan-ssh", kind: "silent", client_id: Fixtures.clientB, authority: home, scopes: [pas],
                username: "ivan@contoso.com", data: ["token_type": "ssh-cert", "key_id": "key-ivan", "req_cnf": "cnf"],
                msal: .init(secret: "ssh-engine-ivan", network_calls: 0)),
            Lookup(
                id: "engine-daemon", kind: "client", client_id: daemon, authority: home,
                scopes: ["https://graph.microsoft.com/.default"], msal: .init(secret: "at-engine-daemon", network_calls: 0)),
            // No access token for Files.Read: msal-python must find and send the engine's refresh
            // tokens: B's own, and for a family app with no app metadata yet, A's family token.
            Lookup(
                id: "engine-ivan-own-rt", kind: "refresh", client_id: Fixtures.clientB, authority: home, scopes: ["Files.Read"],
                username: "ivan@contoso.com",
                msal: .init(
                    secret: "at-refreshed-with-rt-engine-ivan", network_calls: 1, sent_refresh_tokens: ["rt-engine-ivan"])),
            Lookup(
                id: "engine-judy-family-rt", kind: "refresh", client_id: "77777777-aaaa-4bbb-8ccc-000000000007",
                authority: home, scopes: ["Files.Read"], username: "judy@contoso.com",
                msal: .init(
                    secret: "at-refreshed-with-frt-engine-judy", network_calls: 1, sent_refresh_tokens: ["frt-engine-judy"])),
        ]
        entries.append(.init(name: "engine_written", path: path.path, lookups: written))
        expected["engine_written"] = Dictionary(uniqueKeysWithValues: written.map { ($0.id, $0.msal!) })

        let consumed = try MSALPython.consume(entries)
        let results = consumed.results
        for entry in entries {
            #expect(
                consumed.reserialized_identical[entry.name] == true,
                "msal-python's serialize() of the engine's \(entry.name) export differs from it")
        }
        for (cacheName, lookups) in expected.sorted(by: { $0.key < $1.key }) {
            for (id, want) in lookups.sorted(by: { $0.key < $1.key }) {
                let got = try #require(results[cacheName]?[id], "msal-python gave no answer for \(cacheName)/\(id)")
                #expect(got.secret == want.secret, "msal-python on the engine's export of \(cacheName): \(id)")
                #expect(got.usernames == want.usernames, "msal-python accounts on the engine's export of \(cacheName): \(id)")
                #expect(
                    got.sent_refresh_tokens == want.sent_refresh_tokens, "refresh tokens msal-python sent: \(cacheName)/\(id)")
                if want.sent_refresh_tokens == nil, want.secret != nil || want.usernames != nil {
                    #expect(got.network_calls == 0, "msal-python went to the network for \(cacheName)/\(id)")
                }
            }
        }
    }
}
