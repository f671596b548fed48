import Foundation
import Glibc
import PostgresNIO
import SecureTokenCache
import SecureTokenCachePostgres

/// A web app's users in a fleet's group in PostgreSQL, as `PeerCompare fleet-fill`, `fleet` and
/// `fleet-bounded` keep them: each user signed in once (authorization code), leaving an access
/// token, a refresh token, an id token and an account, at the sizes Entra ID issues them.
/// compare_fleet.py's `fleet_response` is the same response for msal-python.
struct FleetWorkload {
    static let webApp = "77777777-aaaa-4bbb-8ccc-000000000007"
    static let tenant = ServerWorkload.tenant
    static let authority = try! Authority("https://login.microsoftonline.com/\(tenant)")
    /// What a request handler asks for before calling Microsoft Graph.
    static let scopes: Scopes = ["User.Read"]
    static let request = TokenRequest(
        clientId: webApp, authority: authority, scopes: ["User.Read", "Mail.Read"], grantType: "authorization_code")
    /// Every instance of the fleet opens the group with this limit, as the issue's fleets do.
    static let memoryLimit = 64 << 20

    /// User `number`'s object id.
    static func user(_ number: Int) -> String {
        let digits = String(number)
        return "00000000-0000-0000-4444-" + String(repeating: "0", count: max(0, 12 - digits.count)) + digits
    }

    /// User `number`'s account, as a web app that knows its users' home account ids makes it.
    static func account(_ number: Int) -> Account {
        Account(fields: [
            "home_account_id": .string("\(user(number)).\(tenant)"), "environment": .string("login.microsoftonline.com"),
            "realm": .string(tenant), "local_account_id": .string(user(number)),
            "username": .string("user\(number)@contoso.com"), "authority_type": .string("MSSTS"),
        ])
    }

    /// The answer to user `number`'s sign-in (`serial` 0) or to refresh number `serial`: a 1.5 KB
    /// access token, a 1.1 KB refresh token and the user's id token. Its lifetime is a day, not
    /// Entra ID's hour, so that a run that fills a million users still finds their tokens valid.
    static func response(_ number: Int, serial: Int = 0) throws -> TokenResponse {
        let user = user(number)
        let seed = UInt64(number) << 24 | UInt64(serial) << 4
        let idToken = jwt(
            #"{"aud":"\#(webApp)","iss":"https://login.microsoftonline.com/\#(tenant)/v2.0","iat":\#(1_700_000_000 + serial),"#
                + #""oid":"\#(user)","sub":"s\#(number)","tid":"\#(tenant)","preferred_username":"user\#(number)@contoso.com","#
                + #""name":"User \#(number)","aio":"\#(noise(seed | 1, 300))"}"#, seed: seed | 2)
        return try TokenResponse(fields: [
            "token_type": .string("Bearer"), "scope": .string("User.Read Mail.Read openid profile"),
            "expires_in": .number("86399"), "ext_expires_in": .number("86399"),
            "access_token": .string(
                jwt(
                    #"{"aud":"https://graph.microsoft.com","oid":"\#(user)","n":\#(number),"s":\#(serial),"x":"\#(noise(seed | 3, 700))"}"#,
                    seed: seed | 4)),
            "refresh_token": .string("rt-\(number)-\(serial)-" + noise(seed | 5, 1_100)),
            "id_token": .string(idToken),
            "client_info": .string(ServerWorkload.base64URL(#"{"uid":"\#(user)","utid":"\#(tenant)"}"#)),
        ])
    }

    /// A JWT-shaped token with `claims` and an RS256-sized signature.
    static func jwt(_ claims: String, seed: UInt64) -> String {
        ServerWorkload.header + "." + ServerWorkload.base64URL(claims) + "." + noise(seed, 342)
    }

    /// `count` base64url characters drawn from `seed`: real tokens are random, and a database
    /// would compress repeated characters that no real token has.
    static func noise(_ seed: UInt64, _ count: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var state = seed
        var out: [UInt8] = []
        out.reserveCapacity(count)
        for _ in 0..<count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            out.append(alphabet[Int(state >> 58)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The fleet's group of `users` users in the database `STC_POSTGRES_URL` names, keyed by the
    /// key file at `keyFile`, as an instance opens it: with a memory limit.
    static func open(users: Int, keyFile: String, memoryLimit: Int = memoryLimit) throws -> CacheGroup {
        var configuration = CacheConfiguration(keySource: .keyFile(path: keyFile))
        configuration.memoryLimit = memoryLimit
        return try CacheGroup.open("stc-compare-fleet-\(users)", postgres: database(), configuration: configuration)
    }

    static func database() throws -> PostgresStoreConfiguration {
        guard let url = getenv("STC_POSTGRES_URL") else {
            fatalError("PeerCompare fleet: STC_POSTGRES_URL is not set (run it inside scripts/postgres run)")
        }
        return try PostgresStoreConfiguration(url: String(cString: url))
    }
}

/// `PeerCompare fleet-fill KEY-FILE USERS`: puts USERS users into the fleet's group, unless its
/// last user is there already, by importing batches of users made in a memory group, each batch
/// one commit, then vacuums and analyzes the tables. Records how long the filling took.
func fillFleet(users: Int, keyFile: String) async throws {
    let group = try FleetWorkload.open(users: users, keyFile: keyFile)
    let cache = try TokenCache(clientId: FleetWorkload.webApp, group: group)
    if try cache.accessToken(for: FleetWorkload.scopes, account: FleetWorkload.account(users - 1)) != nil {
        results.append(("postgres.fill.\(users)", Measurement(ns: 0, samples: 0, note: "already in the database")))
        return
    }
    // A batch the memory limit holds at once: a write loads the partitions it writes.
    let batch = 500
    let start = now()
    for first in stride(from: 0, to: users, by: batch) {
        let scratch = try TokenCache(clientId: FleetWorkload.webApp, group: CacheGroup(inMemory: "stc-compare-fill"))
        for number in first..<min(first + batch, users) {
            try scratch.store(FleetWorkload.response(number), for: FleetWorkload.request, signIn: false)
        }
        try group.importMSAL(scratch.group.exportMSAL(includeSecrets: true))
    }
    let elapsed = now() - start
    // As msal-python's table is after its COPY: the measurements then find the tables' statistics
    // current and no autovacuum of the fill running under them.
    let client = try baselineClient()
    try await client.query("VACUUM ANALYZE stc_rows, stc_parts, stc_groups")
    let perUser = Int((Double(elapsed) / Double(users) / 1000).rounded())
    results.append(
        (
            "postgres.fill.\(users)",
            Measurement(
                ns: Double(elapsed), samples: users,
                note: "\(users) users in commits of \(batch) (CacheGroup.importMSAL), \(perUser) µs a user")
        ))
}

/// The floor a cold read is held to: one row of the group's table by its primary key, through a
/// postgres-nio prepared statement, with nothing around it.
struct SealedRowByKey: PostgresPreparedStatement {
    // Named, as the store's statements are: postgres-nio makes an unnamed one's name with
    // `String(reflecting:)` on every run, which the floor must not pay.
    static let name = "floor_sealed_row_by_key"
    static let sql = "SELECT sealed FROM stc_rows WHERE group_id = $1 AND name = $2"
    typealias Row = ByteBuffer
    var group: ByteBuffer
    var name: ByteBuffer

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(group)
        bindings.append(name)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> ByteBuffer { try row.decode(ByteBuffer.self) }
}

/// A postgres-nio client of its own for the database the fleet's group is in, running until the
/// process ends.
func baselineClient() throws -> PostgresClient {
    let database = try FleetWorkload.database()
    let configuration: PostgresClient.Configuration
    switch database.endpoint {
    case .unixSocket(let path):
        configuration = PostgresClient.Configuration(
            unixSocketPath: path, username: database.username, password: database.password, database: database.database)
    case .tcp(let host, let port):
        configuration = PostgresClient.Configuration(
            host: host, port: port, username: database.username, password: database.password, database: database.database,
            tls: .disable)
    }
    let client = PostgresClient(configuration: configuration)
    Task { await client.run() }
    return client
}

/// `PeerCompare fleet KEY-FILE USERS [REPEATS]`: an instance of the fleet over the group
/// `fleet-fill` made (open with ``FleetWorkload/memoryLimit``), timing:
/// - an L1 hit: `accessToken(for:account:)` for users already in memory, a different user each
///   call, and the same user again (answered by the cache's last answer);
/// - an L2 cold read: the same lookup for a user not in memory (its partition loaded),
///   alternating call by call with the floor, ``SealedRowByKey`` on random rows of the same
///   table, so that each call of either starts from the state the other left: the database's
///   process and the client's event loop idle since the last answer (see below);
/// - a write: `store(_:for:)` of a refresh for a user in memory (a new access, refresh and id
///   token);
/// - lookups per second: tasks on the cooperative pool, each looking up users in a loop, nine
///   in ten among a working set that the limit holds and one in ten among all the users.
func measureFleet(users: Int, keyFile: String, repeats: Int) async throws {
    let group = try FleetWorkload.open(users: users, keyFile: keyFile)
    let cache = try TokenCache(clientId: FleetWorkload.webApp, group: group)
    let scopes = FleetWorkload.scopes
    // Users spread over the whole group; each block of the cold reads takes users no lookup has
    // asked for yet.
    var order = Array(0..<users)
    order.shuffle()
    var next = 0
    func untouched(_ count: Int) -> [Account] {
        defer { next += count }
        return order[next..<next + count].map(FleetWorkload.account)
    }
    func expectHit(_ account: Account) throws {
        guard try cache.accessToken(for: scopes, account: account) != nil else {
            fatalError("fleet: no token for \(account.homeAccountId.rawValue); was the group filled (fleet-fill)?")
        }
    }

    // L1 hits over a working set the limit holds.
    let workingUsers = Array(order[0..<500])
    let working = untouched(workingUsers.count)
    for account in working { try expectHit(account) }
    var turn = 0
    try loop("postgres.l1Hit.\(users)", iterations: 200_000, repeats: repeats) {
        turn = turn == working.count - 1 ? 0 : turn + 1
        consume(try cache.accessToken(for: scopes, account: working[turn]))
    }

    // The same user again: answered from the cache's last answer, as a burst of one user's calls is.
    try loop("postgres.l1HitSameUser.\(users)", iterations: 200_000, repeats: repeats) {
        consume(try cache.accessToken(for: scopes, account: working[0]))
    }

    // Cold reads, alternating call by call with the floor. A cold read does its own work between
    // its round trips (opening, decoding and filing the rows), during which the database's process
    // and the event loop that waits for it go idle, and waking them is part of every round trip it
    // makes. Run back to back in a block of their own, the floor's calls keep both awake, which no
    // cold read can: that figure is reported beside the floor, and is not the floor.
    let client = try baselineClient()
    let count = repeats * 100
    let backToBack = 500
    var keys: [SealedRowByKey] = []
    for try await (groupID, name) in try await client.query(
        "SELECT group_id, name FROM stc_rows WHERE NOT deleted ORDER BY random() LIMIT \(count + backToBack + 20)"
    ).decode((ByteBuffer, ByteBuffer).self) {
        keys.append(SealedRowByKey(group: groupID, name: name))
    }
    func selectFloor() async throws -> Double {
        let key = keys.removeLast()
        let start = now()
        for try await row in try await client.execute(key) { consume(row) }
        return Double(now() - start)
    }
    var cold: [Double] = []
    var floor: [Double] = []
    for _ in 0..<3 {  // warm-up: the floor's connection and its statement prepared
        try expectHit(untouched(1)[0])
        _ = try await selectFloor()
    }
    for account in untouched(count) {
        let start = now()
        let found = try cache.accessToken(for: scopes, account: account)
        cold.append(Double(now() - start))
        guard found != nil else { fatalError("fleet: a cold read found nothing") }
        floor.append(try await selectFloor())
    }
    var awake: [Double] = []
    for _ in 0..<backToBack { awake.append(try await selectFloor()) }
    results.append(("postgres.coldRead.\(users)", Measurement(ns: median(cold), samples: cold.count)))
    results.append(("postgres.primaryKeySelect.\(users)", Measurement(ns: median(floor), samples: floor.count)))
    results.append(("postgres.primaryKeySelectBackToBack.\(users)", Measurement(ns: median(awake), samples: awake.count)))

    // Writes: a refresh of a user in memory, each a new one.
    var serial = 0
    var response = try FleetWorkload.response(0)
    try calls(
        "postgres.write.\(users)", count: 200,
        setup: {
            serial += 1
            response = try FleetWorkload.response(workingUsers[serial % workingUsers.count], serial: serial)
        }
    ) {
        consume(try cache.store(response, for: FleetWorkload.request, signIn: false))
    }

    try await measureLookupRate(cache: cache, users: users, working: working, repeats: repeats)
}

/// Lookups per second with `tasks` tasks on the cooperative pool, nine in ten lookups among
/// `working` (in memory) and one in ten among all `users` (mostly a partition load); records the
/// median rate of `repeats` rounds and the share of lookups that went to the database.
func measureLookupRate(cache: TokenCache, users: Int, working: [Account], repeats: Int, tasks: Int = 8) async throws {
    let round: UInt64 = 2_000_000_000
    var rates: [Double] = []
    var loads: [Double] = []
    for _ in 0..<repeats {
        // Each task's users drawn before the clock starts, as a request names its user.
        let draws = (0..<tasks).map { _ in
            (0..<20_000).map { _ in
                Int.random(in: 0..<10) == 0
                    ? FleetWorkload.account(Int.random(in: 0..<users)) : working[Int.random(in: 0..<working.count)]
            }
        }
        let deadline = now() + round
        let start = now()
        let counts = try await withThrowingTaskGroup(of: (Int, Int).self) { tasks in
            for accounts in draws {
                tasks.addTask {
                    var lookups = 0
                    var slow = 0
                    while now() < deadline {
                        let account = accounts[lookups % accounts.count]
                        let before = now()
                        consume(try cache.accessToken(for: FleetWorkload.scopes, account: account))
                        // A hit takes well under a microsecond; a lookup over 20 µs went to the
                        // database.
                        if now() - before > 20_000 { slow += 1 }
                        lookups += 1
                        // The other tasks get their turn, as request handlers would.
                        if lookups % 64 == 0 { await Task.yield() }
                    }
                    return (lookups, slow)
                }
            }
            return try await tasks.reduce((0, 0)) { ($0.0 + $1.0, $0.1 + $1.1) }
        }
        let elapsed = Double(now() - start) / 1e9
        rates.append(Double(counts.0) / elapsed)
        loads.append(Double(counts.1) / Double(max(1, counts.0)))
    }
    results.append(
        (
            "postgres.lookupRate.\(users)",
            Measurement(
                ns: median(rates), samples: repeats,
                note:
                    "lookups per second, \(tasks) tasks on the cooperative pool; 9 in 10 among \(working.count) users in memory, 1 in 10 among all \(users); \(Int((median(loads) * 100).rounded()))% went to the database"
            )
        ))
}

/// `PeerCompare fleet-bounded KEY-FILE USERS LIMIT-MB`: an instance of the fleet that looks up
/// each of the USERS users of the group `fleet-fill` made once (each a partition load), with a
/// first level of LIMIT-MB; records the process's resident memory above what it was after
/// its first lookup (its peak, sampled every 1,000 lookups), what the group counted, the time
/// per lookup, and the slowest lookups: once the first level is full, a load that takes it past
/// its limit drops partitions from memory while its request waits.
func measureBoundedFleet(users: Int, keyFile: String, limitMB: Int) throws {
    let group = try FleetWorkload.open(users: users, keyFile: keyFile, memoryLimit: limitMB << 20)
    let cache = try TokenCache(clientId: FleetWorkload.webApp, group: group)
    // Allocated and written before the baseline, so that the resident memory measured is the
    // cache's.
    var durations = [UInt64](repeating: 0, count: users)
    // What the process holds before the first level holds much: code, connections, the first
    // allocations.
    guard try cache.accessToken(for: FleetWorkload.scopes, account: FleetWorkload.account(0)) != nil else {
        fatalError("fleet-bounded: no token for user 0; was the group filled (fleet-fill)?")
    }
    let baseline = residentBytes()
    var peak = 0
    var peakUse = 0
    var missing = 0
    let start = now()
    for number in 1..<users {
        let before = now()
        if try cache.accessToken(for: FleetWorkload.scopes, account: FleetWorkload.account(number)) == nil { missing += 1 }
        durations[number] = now() - before
        if number % 1_000 == 999 {
            peak = max(peak, residentBytes() - baseline)
            peakUse = max(peakUse, group.memoryUse ?? 0)
        }
    }
    let perLookup = Double(now() - start) / Double(users - 1)
    guard missing == 0 else { fatalError("fleet-bounded: \(missing) users had no token") }
    results.append(
        (
            "postgres.bounded.rssPeakGrowth.\(users)",
            Measurement(
                ns: Double(peak), samples: users / 1_000,
                note: "bytes of resident memory above the baseline, at most; limit \(limitMB) MB")
        ))
    results.append(
        (
            "postgres.bounded.peakUse.\(users)",
            Measurement(ns: Double(peakUse), samples: users / 1_000, note: "bytes the group counted, at most")
        ))
    results.append(
        (
            "postgres.bounded.lookup.\(users)",
            Measurement(
                ns: perLookup, samples: users,
                note: "ns per lookup of a user not in memory (a partition load), drops from memory included")
        ))
    // The lookups after the first level filled: the second half.
    var late = durations[(users / 2)...].sorted()
    late.removeAll { $0 == 0 }
    for (name, fraction) in [("p50", 0.5), ("p99", 0.99), ("p999", 0.999), ("max", 1.0)] where !late.isEmpty {
        let rank = min(late.count - 1, Int((Double(late.count) * fraction).rounded(.up)) - 1)
        results.append(
            (
                "postgres.bounded.lookup.\(name).\(users)",
                Measurement(ns: Double(late[max(0, rank)]), samples: late.count, note: "the second half's lookups")
            ))
    }
}

/// `PeerCompare fleet-spin KEY-FILE USERS OP N`, for profilers (valgrind --tool=callgrind): an
/// instance of the group `fleet-fill` made doing OP N times: `hit` (a lookup of one of 500 users
/// in memory, a different one each time), `cold` (a lookup of a user not in memory) or `write` (a
/// refresh stored for one of 500 users in memory, as the fleet benchmark's writes).
func spinFleet(users: Int, keyFile: String, operation: String, count: Int) throws {
    let group = try FleetWorkload.open(users: users, keyFile: keyFile)
    let cache = try TokenCache(clientId: FleetWorkload.webApp, group: group)
    // Distinct users spread over the group (7,919 is a prime that divides no size used here).
    let accounts = (0..<min(users, operation == "cold" ? count : 500)).map { FleetWorkload.account($0 * 7_919 % users) }
    switch operation {
    case "hit":
        for account in accounts { consume(try cache.accessToken(for: FleetWorkload.scopes, account: account)) }
        for turn in 0..<count { consume(try cache.accessToken(for: FleetWorkload.scopes, account: accounts[turn % 500])) }
    case "cold":
        for account in accounts {
            guard try cache.accessToken(for: FleetWorkload.scopes, account: account) != nil else {
                fatalError("fleet-spin: a cold read found nothing")
            }
        }
    case "write":
        for account in accounts { consume(try cache.accessToken(for: FleetWorkload.scopes, account: account)) }
        for turn in 0..<count {
            let user = turn % 500 * 7_919 % users
            consume(try cache.store(FleetWorkload.response(user, serial: turn + 1), for: FleetWorkload.request, signIn: false))
        }
    default: fatalError("fleet-spin: hit | cold | write")
    }
}

/// `PeerCompare sign-in USERS [REPEATS]`: a web app's memory group into which USERS users have
/// signed in (authorization code, `signIn: true`); times the sign-in of a user new to the app and
/// the sign-in again of one signed in before. msal-python keeps no sign-in state, so there is no
/// peer figure: the two show that a sign-in costs what a store costs, whatever the number of
/// users (each sign-in once rewrote a record naming every user).
func measureSignIn(users: Int, repeats: Int) throws {
    let cache = try TokenCache(clientId: FleetWorkload.webApp, group: CacheGroup(inMemory: "stc-compare-sign-in"))
    for number in 0..<users {
        try cache.store(FleetWorkload.response(number), for: FleetWorkload.request, signIn: true)
    }
    let count = 20 * max(1, repeats)
    var next = users
    var response = try FleetWorkload.response(0)
    try calls(
        "memory.signInNew.\(users)", count: count,
        setup: {
            response = try FleetWorkload.response(next); next += 1
        }
    ) {
        consume(try cache.store(response, for: FleetWorkload.request, signIn: true))
    }
    var serial = 0
    try calls(
        "memory.signInAgain.\(users)", count: count,
        setup: {
            serial += 1
            response = try FleetWorkload.response(serial * 7_919 % users, serial: serial)
        }
    ) {
        consume(try cache.store(response, for: FleetWorkload.request, signIn: true))
    }
}
