import Foundation
import Testing

/// The private PostgreSQL server `scripts/postgres run` starts for the tests (`scripts/test` runs
/// the suites inside it and sets `STC_POSTGRES_REQUIRED=1`, so a missing server fails them).
enum PostgresDatabase {
    /// Whether the server was promised; without it the PostgreSQL cases are not run (`--fast`).
    static let available = ProcessInfo.processInfo.environment["STC_POSTGRES_REQUIRED"] == "1"

    /// The server's loopback URL, with the password.
    static func url() throws -> String {
        try #require(
            ProcessInfo.processInfo.environment["STC_POSTGRES_TCP_URL"],
            "STC_POSTGRES_TCP_URL is not set: run the tests with scripts/test")
    }

    /// The server's Unix-socket URL (no password).
    static func socketURL() throws -> String {
        try #require(
            ProcessInfo.processInfo.environment["STC_POSTGRES_URL"],
            "STC_POSTGRES_URL is not set: run the tests with scripts/test")
    }

    /// Runs `sql` with psql as the server's superuser in `database`; returns what it printed
    /// (unaligned, tuples only).
    @discardableResult
    static func psql(_ sql: String, database: String = "stc") throws -> String {
        let run = try psqlRun(sql, database: database)
        try #require(run.status == 0, "psql failed: \(run.stderr)")
        return run.stdout
    }

    /// Runs `sql` as ``psql(_:database:)`` does, and returns how psql ended, whatever it was (a
    /// session the test ends itself).
    static func psqlRun(_ sql: String, database: String = "stc") throws -> Cachetool.Run {
        let folder = try #require(ProcessInfo.processInfo.environment["STC_POSTGRES_DIR"], "run the tests with scripts/test")
        let port = try String(contentsOfFile: folder + "/port", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        let programs = versions.compactMap(Int.init).max().map { "/usr/lib/postgresql/\($0)/bin" } ?? "/usr/bin"
        return try Cachetool.runProgram(
            URL(fileURLWithPath: programs + "/psql"),
            ["-h", folder, "-p", port, "-U", "postgres", "-d", database, "-v", "ON_ERROR_STOP=1", "-Atqc", sql],
            input: nil, environment: [:])
    }

    /// `url` naming database `database` instead of its own.
    static func url(_ url: String, database: String) -> String {
        guard let slash = url.range(of: "/", options: .backwards, range: url.range(of: "@")!.upperBound..<url.endIndex) else {
            return url
        }
        let query = url[slash.upperBound...].firstIndex(of: "?").map { String(url[$0...]) } ?? ""
        return String(url[..<slash.upperBound]) + database + query
    }
}
