import ArgumentParser
import Glibc
import SecureTokenCache

/// The outcome of one `cachetool doctor` check.
struct DoctorCheck {
    enum Outcome: String {
        case ok, warning, failed, skipped
    }

    var name: String
    var outcome: Outcome
    var detail: String
    /// What to do about a problem.
    var advice: String = ""
    /// The exit status a failed check stands for.
    var status: ExitStatus = .ok
    /// The machine-readable name of what was found: the library's error code, or the kinds of
    /// the repairs a file group awaits.
    var code: String? = nil

    var json: JSONValue {
        .object([
            "check": .string(name), "outcome": .string(outcome.rawValue), "detail": .string(detail),
            "advice": .optional(advice.isEmpty ? nil : advice), "exitStatus": .integer(status.rawValue),
            "code": .optional(code),
        ])
    }
}

/// `cachetool doctor`: checks the environment a group needs and says what to do about each problem.
struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the environment a group needs, and say what to fix.",
        discussion: """
            Runs these checks and prints one line for each, with advice for each problem:
              session bus        DBUS_SESSION_BUS_ADDRESS is set and its socket exists
              Secret Service     org.freedesktop.secrets answers on the session bus
              keyring unlocked   the collection holding the group's key is unlocked
              directory          the file-store folder is yours, 0700 and writable
              coordination       where the processes sharing the group meet (lock, refresh
                                 locks, counter) for each store, and who holds the lock
              file integrity     the group's file store verifies under the given key (header,
                                 state and every transaction of its log), and whether a crash
                                 left a write for the next open to finish or cut off

            For a group in PostgreSQL (--store postgres) it checks instead:
              database           the database answers the login, and its token cache tables
                                 are of a version this library reads
              group              the group is there and opens with the given key

            For another tool's shared cache (--store msal-file, msal-keyring or a preset) it \
            checks instead:
              shared cache       the file (owned by you, 0600) or the keyring item's signal file
              lock file          whether a tool holds the cache's lock file, and whether its
                                 holder still runs
              document           the MSAL JSON document parses: entries and accounts
              protection         always a warning: the cache is plaintext JSON or a keyring item
                                 any process of yours can read, in the other tools' format that
                                 cannot be sealed; the advice says what you can do about it

            doctor never creates, unlocks or changes anything: it asks the Secret Service \
            without a prompt, and reads the group's files without taking its lock, repairing \
            or quarantining nothing (opening a damaged group would copy the damaged file to \
            its quarantine/ folder).

            Exits with status 0 when no check failed, else with the exit status of the first \
            failed check (for example 6 for a locked keyring, 10 for an open directory).

            EXAMPLES
              cachetool doctor
              cachetool doctor --store file --dir /srv/tokens --json
              cachetool doctor --store azure-cli
            """
    )

    @Flag(help: "Print JSON: one object per check.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let configuration = try global.configuration()
        var checks: [DoctorCheck] = []
        if global.store.kind == .postgres {
            checks = postgres(configuration)
        } else if let cache = configuration.sharedCache {
            if cache.kind != .msalFile {
                checks.append(Self.sessionBus())
                checks.append(contentsOf: Self.keyring(probeKeyring(configuration)))
            }
            checks.append(contentsOf: Self.sharedCache(cache, group: global.group, configuration: configuration))
        } else {
            checks.append(Self.sessionBus())
            checks.append(contentsOf: Self.keyring(probeKeyring(configuration)))
            checks.append(contentsOf: directory())
            checks.append(contentsOf: coordination(configuration))
            checks.append(integrity(configuration))
        }

        if json {
            Console.line(JSONWriter.text(.array(checks.map(\.json)), style: .pretty))
        } else {
            var table = Table(["CHECK", "RESULT", "DETAIL"])
            for check in checks { table.append([check.name, check.outcome.rawValue, check.detail]) }
            Console.out(table.render())
            let advice = checks.filter { !$0.advice.isEmpty }
            if !advice.isEmpty {
                Console.line()
                for check in advice { Console.line("\(check.name): \(check.advice)") }
            }
        }
        if let failed = checks.first(where: { $0.outcome == .failed }) {
            throw ExitCode(failed.status.rawValue)
        }
    }

    /// Whether the session bus the Secret Service needs is reachable.
    static func sessionBus() -> DoctorCheck {
        let name = "session bus"
        guard let address = Console.environment("DBUS_SESSION_BUS_ADDRESS"), !address.isEmpty else {
            return DoctorCheck(
                name: name, outcome: .warning, detail: "DBUS_SESSION_BUS_ADDRESS is not set: the keyring store can't be used",
                advice:
                    "run inside a desktop session, or start one with `dbus-run-session -- cachetool ...`; or use --store file with --passphrase-env or --key-file",
                status: .keyringUnavailable)
        }
        for part in address.split(separator: ";").first.map({ $0.split(separator: ",") }) ?? [] {
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0].hasSuffix("path") {
                let path = String(pair[1])
                if !FileAccess.exists(path) {
                    return DoctorCheck(
                        name: name, outcome: .failed, detail: "the bus socket \(path) does not exist",
                        advice: "the session bus is gone: log in again or restart it (`dbus-run-session`)",
                        status: .keyringUnavailable)
                }
            }
        }
        return DoctorCheck(name: name, outcome: .ok, detail: address)
    }

    /// What the library says about the Secret Service, read only: the bus it answers on, or the
    /// error that makes the keyring unusable.
    func probeKeyring(_ configuration: CacheConfiguration) -> Result<String, TokenCacheError> {
        do {
            try CacheGroup.checkSecretService(configuration: configuration)
            return .success("answers on \(Console.environment("DBUS_SESSION_BUS_ADDRESS") ?? "the session bus")")
        } catch let error as TokenCacheError {
            return .failure(error)
        } catch {
            return .failure(TokenCacheError(.keyringFailure, "the Secret Service could not be probed"))
        }
    }

    /// The Secret Service and collection-lock checks for a probe's outcome.
    static func keyring(_ probe: Result<String, TokenCacheError>) -> [DoctorCheck] {
        switch probe {
        case .success(let location):
            return [
                DoctorCheck(name: "Secret Service", outcome: .ok, detail: location),
                DoctorCheck(name: "keyring unlocked", outcome: .ok, detail: "the collection is unlocked"),
            ]
        case .failure(let error):
            switch error.code {
            case .noSessionBus:
                // Like the session bus check: the file store still works.
                return [
                    DoctorCheck(
                        name: "Secret Service", outcome: .warning, detail: error.message,
                        advice: "the keyring store needs a session bus; the file store works without one",
                        status: .keyringUnavailable, code: error.code.name),
                    DoctorCheck(name: "keyring unlocked", outcome: .skipped, detail: "no session bus"),
                ]
            case .secretServiceUnavailable:
                return [
                    DoctorCheck(
                        name: "Secret Service", outcome: .failed, detail: error.message,
                        advice:
                            "start a Secret Service (gnome-keyring-daemon, or KeePassXC with its Secret Service on), or use --store file",
                        status: .keyringUnavailable, code: error.code.name),
                    DoctorCheck(name: "keyring unlocked", outcome: .skipped, detail: "no Secret Service"),
                ]
            case .collectionLocked, .interactionNotAllowed:
                return [
                    DoctorCheck(name: "Secret Service", outcome: .ok, detail: "reachable"),
                    DoctorCheck(
                        name: "keyring unlocked", outcome: .failed, detail: error.message,
                        advice: "unlock the login keyring (log in graphically, or use Seahorse) and retry",
                        status: .keyringUnavailable, code: error.code.name),
                ]
            default:
                return [
                    DoctorCheck(
                        name: "Secret Service", outcome: .failed, detail: error.message, advice: "retry, or use --store file",
                        status: ExitStatus(error.code), code: error.code.name),
                    DoctorCheck(name: "keyring unlocked", outcome: .skipped, detail: "the Secret Service failed"),
                ]
            }
        }
    }

    /// The file store's root folder (and the group's folder in it): owned by the user, 0700, writable.
    func directory() -> [DoctorCheck] {
        let root = GlobalOptions.fileStoreRoot(global.dir)
        var checks: [DoctorCheck] = []
        for (path, isRoot) in [(root, true), (root + "/" + global.group, false)] {
            var info = stat()
            guard lstat(path, &info) == 0 else {
                if isRoot {
                    checks.append(
                        DoctorCheck(
                            name: "directory", outcome: .ok, detail: "\(path) does not exist yet; the file store creates it 0700")
                    )
                }
                break
            }
            let name = isRoot ? "directory" : "group directory"
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                checks.append(
                    DoctorCheck(
                        name: name, outcome: .failed, detail: "\(path) is not a directory", advice: "move it away, or pass --dir",
                        status: .failure))
                break
            }
            let mode = info.st_mode & 0o777
            if info.st_uid != geteuid() {
                checks.append(
                    DoctorCheck(
                        name: name, outcome: .failed, detail: "\(path) belongs to uid \(info.st_uid), not you",
                        advice: "use a folder you own (--dir)", status: .insecurePermissions))
            } else if mode & 0o077 != 0 {
                checks.append(
                    DoctorCheck(
                        name: name, outcome: .failed,
                        detail: "\(path) has mode \(String(mode, radix: 8)): others can reach the tokens",
                        advice: "chmod 700 \(path)", status: .insecurePermissions))
            } else if access(path, W_OK) != 0 {
                checks.append(
                    DoctorCheck(
                        name: name, outcome: .failed, detail: "\(path) is not writable: \(Console.describe(errno: errno))",
                        advice: "make it writable (chmod u+w), remount it read-write, or pass another --dir", status: .failure))
            } else {
                checks.append(DoctorCheck(name: name, outcome: .ok, detail: "\(path) (mode \(String(mode, radix: 8)))"))
            }
        }
        return checks
    }

    /// Where the group's processes coordinate, for each store, and who holds the lock. Every
    /// process finds these folders from the group's name and data folder alone, never from its
    /// `XDG_RUNTIME_DIR`.
    func coordination(_ configuration: CacheConfiguration) -> [DoctorCheck] {
        do {
            return try CoordinationFolder.all(group: global.group, configuration: configuration).map { folder in
                let name = "coordination (\(folder.store.rawValue))"
                guard folder.exists else {
                    return DoctorCheck(
                        name: name, outcome: .ok, detail: "\(folder.path) (not created: no \(folder.store.rawValue) group yet)")
                }
                let lock =
                    folder.isLocked
                    ? "locked by pid \(folder.lockHolder.map(String.init) ?? "unknown")"
                        + (folder.lockHeldFor.map { " for \(Console.seconds($0))" } ?? "")
                    : "lock free" + (folder.lockHolder.map { " (last taken by pid \($0))" } ?? "")
                return DoctorCheck(name: name, outcome: .ok, detail: "\(folder.path): \(lock)")
            }
        } catch let error as TokenCacheError {
            return [
                DoctorCheck(
                    name: "coordination", outcome: .failed, detail: error.message, advice: "see the message",
                    status: ExitStatus(error.code))
            ]
        } catch {
            return [DoctorCheck(name: "coordination", outcome: .failed, detail: "\(error)", status: .failure)]
        }
    }

    /// Whether the group's file store verifies under the key, read only
    /// (``FileGroupIntegrity``): nothing is locked, repaired, quarantined or created, so a damaged
    /// group is reported as it was found.
    func integrity(_ configuration: CacheConfiguration) -> DoctorCheck {
        let name = "file integrity"
        let folder = GlobalOptions.fileStoreRoot(global.dir) + "/" + global.group
        guard FileAccess.exists(folder) else {
            return DoctorCheck(name: name, outcome: .skipped, detail: "no file-store group at \(folder)")
        }
        do {
            let integrity = try FileGroupIntegrity.check(global.group, configuration: configuration)
            let summary = "\(integrity.countByKind.values.reduce(0, +)) entries, generation \(integrity.generation)"
            guard !integrity.findings.isEmpty else { return DoctorCheck(name: name, outcome: .ok, detail: summary) }
            return DoctorCheck(
                name: name, outcome: .warning,
                detail: ([summary] + integrity.findings.map(\.message)).joined(separator: "; "),
                advice:
                    "a process was killed or the machine lost power while writing; the next open of the group finishes the repair (`cachetool status` opens it)",
                code: integrity.findings.map(\.kind.name).joined(separator: ","))
        } catch let error as TokenCacheError {
            let advice: String
            switch error.code {
            case .wrongKey: advice = "pass the passphrase (--passphrase-env) or key file (--key-file) the group was created with"
            case .storeCorrupted:
                advice =
                    "the group cannot be used; restore \(folder) from a backup, or move it aside and sign in again (opening it copies the damaged file to its quarantine/ folder)"
            case .unsupportedFormat: advice = "open the group with the newer version of cachetool that wrote it"
            case .insecurePermissions: advice = "chmod 700 the folder and 600 its files"
            default: advice = "see the message"
            }
            return DoctorCheck(
                name: name, outcome: .failed, detail: error.message, advice: advice, status: ExitStatus(error.code),
                code: error.code.name)
        } catch {
            return DoctorCheck(name: name, outcome: .failed, detail: "\(error)", status: .failure)
        }
    }
}
