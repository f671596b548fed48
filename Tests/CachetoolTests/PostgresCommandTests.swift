import Foundation
import TestSupport
import Testing

/// What only `--store postgres` has (every other command runs against it in
/// ``PersistentGroupTests``): commands that only read or remove create no table and no group, the
/// password of the URL is never printed, and an account is cleared from the database.
@Suite(
    .tags(.postgres), .timeLimit(.minutes(3)),
    .enabled(if: PostgresDatabase.available, "needs the server of scripts/postgres (STC_POSTGRES_REQUIRED=1)"))
struct PostgresCommandTests {
    static func options(url: String, group: String) -> [String] {
        ["--store", "postgres", "--url", url, "--passphrase-env", FileStore.passphraseVariable, "--group", group]
    }

    /// In a database without the library's tables, and in one with them but without the group,
    /// status, list, export and clear say so (exit 3) and leave the database as it was.
    @Test func readingOrClearingCreatesNoTableAndNoGroup() throws {
        let database = "stc_cachetool_\(UUID().uuidString.prefix(8).lowercased())"
        try PostgresDatabase.psql("CREATE DATABASE \(database) OWNER stc", database: "postgres")
        defer { _ = try? PostgresDatabase.psql("DROP DATABASE \(database) WITH (FORCE)", database: "postgres") }
        let url = PostgresDatabase.url(try PostgresDatabase.url(), database: database)
        let tables = {
            try PostgresDatabase.psql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'stc_%'", database: database)
        }
        let commands = [["status"], ["list", "tokens"], ["export", "-"], ["clear", "--all", "--yes"]]
        for command in commands {
            let run = try Cachetool.run(
                command + Self.options(url: url, group: "com.example.none"), environment: FileStore.environment)
            #expect(run.status == 3, "\(command): \(run)")
            #expect(run.stderr.contains("no token cache tables"), "\(command): \(run.stderr)")
            #expect(try tables().trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(command) created tables")
        }
        // Tables made by an import of another group: reading a missing group still creates nothing.
        let made = try Cachetool.run(
            ["import", TestFiles.vector("v1_single_account").path] + Self.options(url: url, group: "com.example.made"),
            environment: FileStore.environment)
        #expect(made.status == 0, "\(made)")
        let groups = { try PostgresDatabase.psql("SELECT count(*) FROM stc_groups", database: database) }
        for command in commands {
            let run = try Cachetool.run(
                command + Self.options(url: url, group: "com.example.missing"), environment: FileStore.environment)
            #expect(run.status == 3 && run.stderr.contains("no group com.example.missing"), "\(command): \(run)")
            #expect(try groups().trimmingCharacters(in: .whitespacesAndNewlines) == "1", "\(command) created a group")
        }
    }

    /// The URL's password, or PGPASSWORD's, reaches the database and never the output: status
    /// names the database by user, host, port and name.
    @Test func thePasswordIsUsedAndNeverPrinted() throws {
        let url = try PostgresDatabase.url()
        let password = try #require(url.split(separator: "@").first?.split(separator: ":").last.map(String.init))
        let group = "com.example.password-\(UUID().uuidString.prefix(8).lowercased())"
        #expect(
            try Cachetool.run(
                ["import", TestFiles.vector("v2_two_accounts_two_tenants").path] + Self.options(url: url, group: group),
                environment: FileStore.environment
            ).status == 0)
        let withoutPassword = url.replacingOccurrences(of: ":\(password)@", with: "@")
        for (given, environment) in [
            (url, FileStore.environment), (withoutPassword, FileStore.environment.merging(["PGPASSWORD": password]) { $1 }),
        ] {
            for command in [["status"], ["status", "--json"], ["list", "all"]] {
                let run = try Cachetool.run(command + Self.options(url: given, group: group), environment: environment)
                #expect(run.status == 0, "\(command): \(run)")
                #expect(!run.stdout.contains(password) && !run.stderr.contains(password), "\(command) printed the password")
            }
        }
        let status = try Cachetool.run(["status"] + Self.options(url: url, group: group), environment: FileStore.environment)
        let place = withoutPassword.split(separator: "?").first.map {
            $0.replacingOccurrences(of: "postgresql://", with: "postgres://")
        }
        #expect(place.map { status.stdout.contains($0) } == true, "\(status) does not name \(place ?? "")")
        // A wrong password is refused with what to do, and not printed either.
        let wrong = try Cachetool.run(
            ["status"] + Self.options(url: url.replacingOccurrences(of: ":\(password)@", with: ":not-it@"), group: group),
            environment: FileStore.environment)
        #expect(wrong.status == 1 && !wrong.stderr.contains("not-it"), "\(wrong)")
        #expect(wrong.stderr.contains("refused the login") && wrong.stderr.contains("check the user and password"), "\(wrong)")
    }

    /// The options of a new group named after `prefix`, into which a vector of two accounts was
    /// imported.
    static func importedGroup(_ prefix: String) throws -> [String] {
        let options = Self.options(
            url: try PostgresDatabase.url(), group: "com.example.\(prefix)-\(UUID().uuidString.prefix(8).lowercased())")
        let imported = try Cachetool.run(
            ["import", TestFiles.vector("v2_two_accounts_two_tenants").path] + options, environment: FileStore.environment)
        try #require(imported.status == 0, "\(imported)")
        return options
    }

    /// `clear --account` removes one user's entries from the database, for every instance.
    @Test func clearingAnAccountRemovesItFromTheDatabase() throws {
        let options = try Self.importedGroup("clear")
        let accounts = try #require(
            try Cachetool.run(["list", "accounts", "--json"] + options, environment: FileStore.environment).json()
                as? [[String: Any]])
        let usernames = accounts.compactMap { $0["username"] as? String }
        #expect(Set(usernames).count == 2, "\(usernames)")
        let username = try #require(usernames.first)
        let cleared = try Cachetool.run(["clear", "--account", username, "--yes"] + options, environment: FileStore.environment)
        #expect(cleared.status == 0, "\(cleared)")
        let left = try #require(
            try Cachetool.run(["list", "accounts", "--json"] + options, environment: FileStore.environment).json()
                as? [[String: Any]])
        #expect(left.compactMap { $0["username"] as? String } == usernames.filter { $0 != username })
    }

    /// A clear whose write cannot reach the database (the group's head held locked past the
    /// timeout) fails, and says nothing was removed: a command exits at once, so a write kept in
    /// memory for later, as apps keep one, would be lost while reported as done.
    @Test(.timeLimit(.minutes(1))) func aClearTheDatabaseDoesNotTakeFailsAndLosesNothing() throws {
        let options = try Self.importedGroup("held")
        let accounts = {
            try Cachetool.run(["list", "accounts", "--json"] + options, environment: FileStore.environment).json()
                as? [[String: Any]]
        }
        let before = try #require(try accounts()).count
        let cleared = try Self.whileHeld(
            "LOCK TABLE stc_groups IN EXCLUSIVE MODE",
            until: "SELECT count(*) FROM pg_locks JOIN pg_class ON pg_locks.relation = pg_class.oid "
                + "WHERE relname = 'stc_groups' AND mode = 'ExclusiveLock' AND granted"
        ) {
            try Cachetool.run(["clear", "--all", "--yes"] + options, environment: FileStore.environment)
        }
        #expect(cleared.status == 1, "\(cleared)")
        #expect(cleared.stderr.contains("did not answer"), "\(cleared)")
        #expect(!cleared.stdout.contains("Removed"), "\(cleared)")
        #expect(try accounts()?.count == before)
        #expect(before > 0)
    }

    /// doctor checks the database and the group, not the keyring or the file store's folder: a
    /// group there passes, a wrong key fails the group (exit 5), a missing group fails it
    /// (exit 3) and is not created.
    @Test func doctorChecksTheDatabaseAndTheGroup() throws {
        let options = try Self.importedGroup("doctor")
        let checks = { (arguments: [String], environment: [String: String]) throws -> (Int32, [String: String]) in
            let run = try Cachetool.run(["doctor", "--json"] + arguments, environment: environment)
            let found = try #require(try run.json() as? [[String: Any]], "\(run)")
            var outcomes: [String: String] = [:]
            for check in found { outcomes[check["check"] as? String ?? ""] = check["outcome"] as? String }
            return (run.status, outcomes)
        }
        let healthy = try checks(options, FileStore.environment)
        #expect(healthy.0 == 0 && healthy.1 == ["database": "ok", "group": "ok"], "\(healthy)")
        let wrongKey = try checks(
            options, FileStore.environment.merging([FileStore.passphraseVariable: "not the fleet's passphrase"]) { $1 })
        #expect(wrongKey.0 == 5 && wrongKey.1 == ["database": "ok", "group": "failed"], "\(wrongKey)")
        var missing = options
        missing[missing.count - 1] = "com.example.doctor-missing-\(UUID().uuidString.prefix(8).lowercased())"
        let absent = try checks(missing, FileStore.environment)
        #expect(absent.0 == 3 && absent.1 == ["database": "ok", "group": "failed"], "\(absent)")
        let groups = try PostgresDatabase.psql("SELECT count(*) FROM stc_groups").trimmingCharacters(
            in: .whitespacesAndNewlines)
        #expect(try checks(missing, FileStore.environment).0 == 3)
        #expect(
            try PostgresDatabase.psql("SELECT count(*) FROM stc_groups").trimmingCharacters(
                in: .whitespacesAndNewlines) == groups)
    }

    /// A command that only reads takes no lock in the database: an instance creating or upgrading
    /// the tables (which holds the schema's lock while it does) does not hold up a status.
    @Test func readingWaitsForNoInstanceThatHoldsTheSchemasLock() throws {
        let options = try Self.importedGroup("schema-lock")
        // The library's lock of the schema: "STCSCHMA".
        let key = 0x5354_4353_4348_4d41
        let status = try Self.whileHeld(
            "SELECT pg_advisory_xact_lock(\(key))",
            until: "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                + "AND objid = \(key & 0xFFFF_FFFF) AND classid = \(key >> 32)"
        ) {
            try Cachetool.run(["status", "--json"] + options, environment: FileStore.environment)
        }
        // Held until the status returned: one that waited for the lock would fail at its timeout.
        #expect(status.status == 0, "\(status)")
    }

    /// `body`'s result, run while another session holds what `lock` takes, from the moment
    /// `until` counts it held to the moment `body` returns; the session is then ended. Returns
    /// once it has.
    static func whileHeld<T>(_ lock: String, until: String, _ body: () throws -> T) throws -> T {
        let marker = "stc-held-\(UUID().uuidString.prefix(8).lowercased())"
        let holder = Thread {
            // Ended by the test: psql then fails, as it should.
            _ = try? PostgresDatabase.psqlRun("BEGIN; \(lock); SELECT pg_sleep(60), '\(marker)'; COMMIT")
        }
        holder.start()
        defer {
            _ = try? PostgresDatabase.psql(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%\(marker)%' AND pid <> pg_backend_pid()"
            )
            while !holder.isFinished { usleep(50_000) }
        }
        let deadline = Date().addingTimeInterval(10)
        while try PostgresDatabase.psql(until).trimmingCharacters(in: .whitespacesAndNewlines) != "1", Date() < deadline {
            usleep(50_000)
        }
        try #require(try PostgresDatabase.psql(until).trimmingCharacters(in: .whitespacesAndNewlines) == "1", "never held")
        return try body()
    }

    /// Without --url, or without the fleet's key, --store postgres is a usage error (exit 2).
    @Test func theDatabaseAndTheKeyAreRequired() throws {
        let noURL = try Cachetool.run(["status", "--store", "postgres", "--passphrase-env", FileStore.passphraseVariable])
        #expect(noURL.status == 2 && noURL.stderr.contains("--url"), "\(noURL)")
        let noKey = try Cachetool.run(["status", "--store", "postgres", "--url", try PostgresDatabase.url()])
        #expect(noKey.status == 2 && noKey.stderr.contains("--key-file or --passphrase-env"), "\(noKey)")
        let urlElsewhere = try Cachetool.run(["status", "--store", "file", "--url", "postgres://x@y/z"])
        #expect(urlElsewhere.status == 2, "\(urlElsewhere)")
    }
}
