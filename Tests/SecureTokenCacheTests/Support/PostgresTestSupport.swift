#if canImport(SecureTokenCachePostgres)
    import Foundation
    import Glibc
    import Testing

    @testable import SecureTokenCache
    @testable import SecureTokenCachePostgres

    /// Where the PostgreSQL tests run: the private server `scripts/postgres run` starts (`scripts/test`
    /// runs the suites inside it and sets `STC_POSTGRES_REQUIRED=1`, so a missing server fails them
    /// instead of skipping them).
    enum PostgresTestSupport {
        /// Whether the private test server was promised.
        static let required = ProcessInfo.processInfo.environment["STC_POSTGRES_REQUIRED"] == "1"

        /// The server's socket URL (trust, as the `stc` role).
        static func socketURL() throws -> String {
            try #require(
                ProcessInfo.processInfo.environment["STC_POSTGRES_URL"],
                "STC_POSTGRES_URL is not set: run the tests with scripts/test")
        }

        /// The server's loopback URL (password, as the `stc` role).
        static func tcpURL() throws -> String {
            try #require(
                ProcessInfo.processInfo.environment["STC_POSTGRES_TCP_URL"],
                "STC_POSTGRES_TCP_URL is not set: run the tests with scripts/test")
        }

        /// The server's folder (socket, data, logs).
        static func folder() throws -> String {
            try #require(
                ProcessInfo.processInfo.environment["STC_POSTGRES_DIR"],
                "STC_POSTGRES_DIR is not set: run the tests with scripts/test")
        }

        /// The database over the Unix socket, as one instance of a fleet sees it.
        static func socketDatabase() throws -> PostgresRowDatabase {
            try PostgresRowDatabase.shared(PostgresStoreConfiguration(url: socketURL()), logger: .discarding)
        }

        /// The same database over loopback TCP: another connection pool and another listener, as a
        /// second instance of a fleet has.
        static func tcpDatabase() throws -> PostgresRowDatabase {
            try PostgresRowDatabase.shared(PostgresStoreConfiguration(url: tcpURL()), logger: .discarding)
        }

        /// A group name no other test uses.
        static func uniqueGroup(_ prefix: String) -> String {
            "stc-test-\(prefix)-\(UUID().uuidString.prefix(8).lowercased())"
        }

        /// The PostgreSQL programs' folder (Debian's, else the one `psql` is in).
        static func programs() throws -> String {
            let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
            if let newest = versions.compactMap(Int.init).max() { return "/usr/lib/postgresql/\(newest)/bin" }
            return "/usr/bin"
        }

        /// Runs `sql` with psql as the server's superuser, in database `database`; returns what it
        /// printed (unaligned, tuples only).
        @discardableResult
        static func psql(_ sql: String, database: String = "stc") throws -> String {
            let folder = try folder()
            let port = try String(contentsOfFile: folder + "/port", encoding: .utf8).trimmingCharacters(
                in: .whitespacesAndNewlines)
            let output = try KeyringTestSupport.run(
                programs() + "/psql",
                ["-h", folder, "-p", port, "-U", "postgres", "-d", database, "-v", "ON_ERROR_STOP=1", "-Atqc", sql])
            guard output.status == 0 else { throw PostgresTestFailure(description: "psql failed: \(output.stderr)") }
            return output.stdout
        }

        /// The whole database as `pg_dump` writes it (schema and data, as text).
        static func dump(database: String = "stc") throws -> String {
            let folder = try folder()
            let port = try String(contentsOfFile: folder + "/port", encoding: .utf8).trimmingCharacters(
                in: .whitespacesAndNewlines)
            let output = try KeyringTestSupport.run(
                programs() + "/pg_dump", ["-h", folder, "-p", port, "-U", "postgres", "-d", database])
            guard output.status == 0 else { throw PostgresTestFailure(description: "pg_dump failed: \(output.stderr)") }
            return output.stdout
        }

        /// Waits until `database` listens to other processes' commits and the read that follows has
        /// moved the watches it then had: a test that counts what a store keeping part of a group
        /// does starts after that read, which moves such a store as if every partition changed.
        static func waitUntilListening(_ database: any RowDatabase) throws {
            let deadline = ContinuousClock.now + .seconds(10)
            let listened = { (RowGroupWatch.resynchronisations(of: database) ?? 0) > 0 }
            while !listened(), ContinuousClock.now < deadline { usleep(1_000) }
            try #require(listened(), "\(database.location) never began to listen")
        }

        /// The databases every suite shares (``socketDatabase()`` and ``tcpDatabase()``) that
        /// listen, with their ``RowGroupWatch/resynchronisations(of:)``.
        static func sharedListening() throws -> [(database: PostgresRowDatabase, count: Int)] {
            try [socketDatabase(), tcpDatabase()].compactMap { database in
                RowGroupWatch.resynchronisations(of: database).map { (database, $0) }
            }
        }

        /// Waits until every database of `before` (``sharedListening()``) listens again: a stop of
        /// the server drops every listener, and the read that follows each reconnection would
        /// otherwise land in a later test.
        static func waitUntilListeningAgain(since before: [(database: PostgresRowDatabase, count: Int)]) throws {
            let deadline = ContinuousClock.now + .seconds(15)
            func behind() -> Int {
                before.filter { (RowGroupWatch.resynchronisations(of: $0.database) ?? 0) <= $0.count }.count
            }
            while behind() > 0, ContinuousClock.now < deadline { usleep(10_000) }
            try #require(behind() == 0, "\(behind()) of the shared databases did not listen again")
        }

        /// Waits until `watch` has heard of every commit up to `generation`, or 5 s have passed;
        /// whether it has.
        @discardableResult
        static func waitUntil(_ watch: RowGroupWatch, hasHeardThrough generation: UInt64) -> Bool {
            let deadline = ContinuousClock.now + .seconds(5)
            while watch.heardThrough < generation, ContinuousClock.now < deadline { usleep(1_000) }
            return watch.heardThrough >= generation
        }

        /// The database's id for group `name`, as psql writes a `bytea` literal.
        static func groupLiteral(_ name: String) -> String {
            "'\\x" + RowStore.groupID(name).map { String($0, radix: 16).leftPadded(to: 2) }.joined() + "'::bytea"
        }
    }

    struct PostgresTestFailure: Error, CustomStringConvertible {
        var description: String
    }

    extension String {
        fileprivate func leftPadded(to count: Int) -> String {
            String(repeating: "0", count: max(0, count - self.count)) + self
        }
    }
#endif
