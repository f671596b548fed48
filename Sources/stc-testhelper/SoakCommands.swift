#if DEBUG
    import Glibc
    @testable import SecureTokenCache

    /// The soak's processes (`GroupSoak` in the tests): workers that share one group through the
    /// public `TokenCache` API, each the only writer of its own client id and accounts, and a
    /// reader of the group they leave.
    ///
    /// Worker `w` is client `soak-client-<w>` with accounts `soak-<w>-<a>` (`a` below ``accounts``).
    /// Each account holds one access token per scope `soak.<k>` (`k` below ``scopes``): a register
    /// `(w, a, k)` whose value is the secret of the last token stored for it, or none after a
    /// sign-out, which empties all of an account's registers. Workers own disjoint clients and
    /// accounts, so a sign-out never races another process's write over what it means, and each
    /// register has one writer whose journal says when each of its values began and was
    /// acknowledged. Secrets are `at-<w>-<incarnation>-<n>`, unique over the whole soak, so
    /// whatever a lookup finds names the write it came from.
    ///
    /// A worker appends one line to its journal per event, each with one `write(2)` to a file
    /// opened `O_APPEND`: a SIGKILL leaves whole lines behind (the page cache keeps them; only a
    /// power cut would need an `fsync`). Times are `CLOCK_MONOTONIC` nanoseconds, one clock for
    /// every process of the machine; a generation and epoch are those of the worker's index
    /// snapshot after the event, taken before the line's last time.
    ///
    ///     start <incarnation> <seed> <generation> <epoch> <time>        the group is open
    ///     put <a> <k> <secret> <time>                                     a store begins
    ///     signout <a> <time>                                              a sign-out begins
    ///     ack <generation> <epoch> <time>                                 the put or sign-out returned
    ///     get <w> <a> <k> <secret or -> <start> <end> <generation> <epoch>   a lookup's answer
    enum Soak {
        static let accounts = 3
        static let scopes = 4
        static let tenant = "5a0c5c6e-5e3a-4f0e-9d1a-50a150a150a1"
        static let authority = Authority(host: "login.microsoftonline.com", tenant: "common")

        /// Opens the soak's group: it compacts a file group, and starts a keyring group's journal
        /// again, far more often than the defaults would in a few thousand operations.
        static func open(_ kind: String, _ root: String, _ group: String) throws -> any CacheStore {
            try TestHelper.open(kind, root, group, compactionMinimumDead: 8, journalSizeLimit: 16 << 10)
        }

        static func client(_ worker: Int) -> String { "soak-client-\(worker)" }
        static func uid(_ worker: Int, _ account: Int) -> String { "soak-\(worker)-\(account)" }
        static func homeAccountId(_ worker: Int, _ account: Int) -> String { uid(worker, account) + "." + tenant }
        static func scope(_ index: Int) -> String { "soak.\(index)" }

        /// A token response for register `(worker, account, scope)` with access token `secret`
        /// (its refresh token changes with it, so that every store leaves dead records and the
        /// group compacts as it goes).
        static func response(worker: Int, account: Int, scope: Int, secret: String) throws -> TokenResponse {
            let uid = uid(worker, account)
            var claims: [UInt8] = []
            JSONWriter.write(
                .object([
                    "aud": .string(client(worker)), "iss": .string("https://login.microsoftonline.com/\(tenant)/v2.0"),
                    "oid": .string(uid), "preferred_username": .string("\(uid)@example.com"), "sub": .string("sub-\(uid)"),
                    "tid": .string(tenant),
                ]), style: .compact, into: &claims)
            return try TokenResponse(fields: [
                "token_type": .string("Bearer"), "access_token": .string(secret), "refresh_token": .string("rt-" + secret),
                "expires_in": .number("3600"), "scope": .string(self.scope(scope)),
                "client_info": .string(Base64URL.encode(Array(#"{"uid":"\#(uid)","utid":"\#(tenant)"}"#.utf8))),
                "id_token": .string(
                    Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8)) + "." + Base64URL.encode(claims) + "."),
            ])
        }

        static func request(worker: Int, scope: Int) -> TokenRequest {
            TokenRequest(
                clientId: client(worker), authority: authority, scopes: [self.scope(scope)], grantType: "authorization_code")
        }

        /// The secret register `(worker, account, scope)` holds in the group as `cache` (worker's
        /// client) sees it, or `nil`.
        static func lookUp(_ cache: TokenCache, worker: Int, account: Int, scope: Int) throws -> String? {
            // An account entry, once stored, stays (a sign-out hides it from its client only):
            // no entry means no store of the account has been seen.
            guard let found = try cache.account(identifier: homeAccountId(worker, account)) else { return nil }
            return try cache.accessToken(for: [self.scope(scope)], account: found)?.token.secret
        }
    }

    extension TestHelper {
        /// One incarnation of soak worker `worker` of `workers`: `operations` lookups, stores and
        /// sign-outs chosen by `seed` (the first a lookup of the register the last incarnation
        /// was killed writing, if it was), each journaled to `journal` (see ``Soak``), then "done".
        static func soak(
            _ group: CacheGroup, journal path: String, workers: Int, worker: Int, incarnation: Int, seed: Int, operations: Int
        ) throws {
            let interrupted = try interruptedWrite(journal: path)
            let journal = try SystemCall.open(path, O_WRONLY | O_APPEND | O_CREAT, 0o600, "opening the journal \(path)")
            func note(_ line: String) {
                let bytes = Array((line + "\n").utf8)
                guard bytes.withUnsafeBytes({ Glibc.write(journal, $0.baseAddress, $0.count) }) == bytes.count else {
                    fail("cannot write the journal \(path): errno \(errno)")
                }
            }
            func seen() throws -> String {
                let cursor = try group.snapshot().cursor
                return "\(cursor.generation) \(cursor.epoch)"
            }
            // The C library's generator: seeded, so an incarnation's choices replay from its seed.
            srand48(seed)
            func random(_ count: Int) -> Int { lrand48() % count }
            let caches = try (0..<workers).map { try TokenCache(clientId: Soak.client($0), group: group) }
            do {
                // The first look at the group reads the database too: an outage there is met as
                // one in an operation is, before the incarnation has started.
                let opened = try seen()
                note("start \(incarnation) \(seed) \(opened) \(now())")
                try soakOperations(
                    group, caches: caches, worker: worker, workers: workers, incarnation: incarnation, operations: operations,
                    interrupted: interrupted, note: note, seen: seen, random: random)
            } catch let error as TokenCacheError where error.code == .databaseUnavailable {
                // The database went away under this incarnation: what it was writing may or may not
                // have committed, as if it had been killed; the soak starts another.
                SystemCall.close(journal)
                say("outage \(error.code)")
                return
            }
            SystemCall.close(journal)
            say("done \(operations)")
        }

        /// The operations of one soak incarnation (see ``soak(_:journal:workers:worker:incarnation:seed:operations:)``).
        private static func soakOperations(
            _ group: CacheGroup, caches: [TokenCache], worker: Int, workers: Int, incarnation: Int, operations: Int,
            interrupted: (account: Int, scope: Int)?, note: (String) -> Void, seen: () throws -> String, random: (Int) -> Int
        ) throws {
            let own = caches[worker]
            for operation in 0..<operations {
                var roll = random(100)
                var account = random(Soak.accounts)
                var scope = random(Soak.scopes)
                if operation == 0, let interrupted {
                    // The register the last incarnation was killed writing: whether a write
                    // interrupted by a kill committed shows here, before anything overwrites it.
                    (roll, account, scope) = (0, interrupted.account, interrupted.scope)
                }
                if roll < 60 {
                    // Two lookups in three are of the worker's own registers: its own writes must
                    // stay visible; the others catch up with other processes' commits.
                    let owner = roll < 40 ? worker : random(workers)
                    let start = now()
                    let found = try Soak.lookUp(caches[owner], worker: owner, account: account, scope: scope)
                    let after = try seen()
                    let end = now()
                    note("get \(owner) \(account) \(scope) \(found ?? "-") \(start) \(end) \(after)")
                } else if roll >= 92, let signedIn = try own.account(identifier: Soak.homeAccountId(worker, account)) {
                    note("signout \(account) \(now())")
                    try own.signOut(signedIn)
                    let after = try seen()
                    note("ack \(after) \(now())")
                } else {
                    let secret = "at-\(worker)-\(incarnation)-\(operation)"
                    note("put \(account) \(scope) \(secret) \(now())")
                    try own.store(
                        Soak.response(worker: worker, account: account, scope: scope, secret: secret),
                        for: Soak.request(worker: worker, scope: scope))
                    let after = try seen()
                    note("ack \(after) \(now())")
                }
            }
        }

        /// The register of the store or sign-out (scope 0 for it) a killed incarnation left
        /// unacknowledged at the end of `journal`, if it did.
        static func interruptedWrite(journal path: String) throws -> (account: Int, scope: Int)? {
            guard let fd = try? SystemCall.open(path, O_RDONLY, 0, "reading the journal \(path)") else { return nil }
            defer { SystemCall.close(fd) }
            let lines = try SystemCall.readAll(fd, "reading the journal \(path)").split(separator: UInt8(ascii: "\n"))
            guard let last = lines.last else { return nil }
            let fields = String(decoding: last, as: UTF8.self).split(separator: " ")
            switch fields.first {
            case "put": return (Int(fields[1])!, Int(fields[2])!)
            case "signout": return (Int(fields[1])!, 0)
            default: return nil
            }
        }

        /// Prints every register of `workers` workers as a process opening the group now sees it
        /// ("register <w> <a> <k> <secret or ->"), then "cursor <generation> <epoch>".
        static func soakRead(_ group: CacheGroup, workers: Int) throws {
            for worker in 0..<workers {
                let cache = try TokenCache(clientId: Soak.client(worker), group: group)
                for account in 0..<Soak.accounts {
                    for scope in 0..<Soak.scopes {
                        let found = try Soak.lookUp(cache, worker: worker, account: account, scope: scope)
                        say("register \(worker) \(account) \(scope) \(found ?? "-")")
                    }
                }
            }
            let cursor = try group.snapshot().cursor
            say("cursor \(cursor.generation) \(cursor.epoch)")
        }

        /// `CLOCK_MONOTONIC` in nanoseconds.
        static func now() -> UInt64 {
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        }
    }
#endif
