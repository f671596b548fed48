import Glibc
import SecureTokenCache

/// `cachetool doctor` on another tool's shared cache: the file or signal file, the tools' lock
/// file, the document, and what protects it. Read only, like every other check.
extension DoctorCommand {
    static func sharedCache(_ cache: MSALSharedCache, group: String, configuration: CacheConfiguration) -> [DoctorCheck] {
        var checks = [location(cache), lockFile(cache)]
        let present = checks[0].outcome == .ok
        checks.append(present ? document(cache, group: group, configuration: configuration) : documentSkipped())
        checks.append(protection(cache))
        return checks
    }

    /// The document's file, or the keyring item's signal file: present, a regular file of yours,
    /// and for a plaintext document readable by you alone.
    static func location(_ cache: MSALSharedCache) -> DoctorCheck {
        let name = "shared cache"
        let path = cache.watchedFile
        let what = cache.kind == .msalFile ? "the cache file" : "the keyring item's signal file"
        var info = stat()
        guard lstat(path, &info) == 0 else {
            return DoctorCheck(
                name: name, outcome: .warning,
                detail: "\(what) \(path) does not exist: \(SharedCacheText.toolName(cache)) never signed in here",
                advice: "sign in with \(SharedCacheText.toolName(cache)), or see `cachetool discover` for the caches there are")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid() else {
            return DoctorCheck(
                name: name, outcome: .failed, detail: "\(what) \(path) is not a regular file owned by you",
                advice: "move it aside; the tools refuse a link or another user's file", status: .insecurePermissions)
        }
        let mode = info.st_mode & 0o777
        if cache.kind == .msalFile, mode & 0o077 != 0 {
            return DoctorCheck(
                name: name, outcome: .failed,
                detail: "\(path) has mode \(String(mode, radix: 8)): other users can read the tokens",
                advice: "chmod 600 \(path)", status: .insecurePermissions)
        }
        return DoctorCheck(name: name, outcome: .ok, detail: "\(path) (mode \(String(mode, radix: 8)), \(info.st_size) bytes)")
    }

    /// Whether a tool holds the lock file now, and whether that holder still runs. Every tool
    /// writes `"<pid> <name>"` into it and removes it when done.
    static func lockFile(_ cache: MSALSharedCache) -> DoctorCheck {
        let name = "lock file"
        let path = cache.lockFile
        var info = stat()
        guard lstat(path, &info) == 0 else {
            return DoctorCheck(name: name, outcome: .ok, detail: "\(path): free")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid() else {
            return DoctorCheck(
                name: name, outcome: .failed, detail: "\(path) is not a regular file owned by you",
                advice: "remove it: no tool can take the lock while it is there", status: .insecurePermissions)
        }
        let text = (try? FileAccess.read(path)).map { String(decoding: $0.prefix(256), as: UTF8.self).trimmingSpaces } ?? ""
        let fields = text.split(separator: " ", maxSplits: 1)
        guard let pid = fields.first.flatMap({ Int32($0) }), pid > 0 else {
            return DoctorCheck(
                name: name, outcome: .warning, detail: "\(path) is there without a process id: a writer is starting, or one died",
                advice: "if it stays, no tool is writing: remove it")
        }
        let holder = fields.count > 1 ? "process \(pid) (\(fields[1]))" : "process \(pid)"
        // Every tool creates the file when it takes the lock and writes its pid at once.
        let heldFor = Console.seconds(Console.age(of: info.st_mtim))
        if kill(pid, 0) == 0 || errno == EPERM {
            return DoctorCheck(name: name, outcome: .ok, detail: "\(path): held by \(holder) for \(heldFor), which is running")
        }
        return DoctorCheck(
            name: name, outcome: .warning, detail: "\(path) was left by \(holder), which no longer runs",
            advice: "the next writer takes it over; the other tools may wait for it a few seconds first, so you may remove it")
    }

    /// The document: it parses as an MSAL cache, with so many entries and accounts.
    static func document(_ cache: MSALSharedCache, group: String, configuration: CacheConfiguration) -> DoctorCheck {
        let name = "document"
        do {
            let opened = try GlobalOptions.openExisting(group, configuration: configuration)
            let statistics = try opened.statistics()
            let entries = statistics.countByKind.values.reduce(0, +)
            return DoctorCheck(
                name: name, outcome: .ok, detail: "an MSAL cache: \(entries) entries, \(statistics.accounts) accounts")
        } catch let failure as CommandFailure {
            return DoctorCheck(name: name, outcome: .failed, detail: failure.message, status: failure.status)
        } catch let error as TokenCacheError {
            let advice =
                switch error.code {
                case .malformedCache: "sign in again with \(SharedCacheText.toolName(cache)), or move the damaged document aside"
                case .invalidArgument: "this build of cachetool cannot open the \(cache.kind) store"
                default: "see the message"
                }
            return DoctorCheck(
                name: name, outcome: .failed, detail: error.message, advice: advice, status: ExitStatus(error.code))
        } catch {
            return DoctorCheck(name: name, outcome: .failed, detail: "\(error)", status: .failure)
        }
    }

    static func documentSkipped() -> DoctorCheck {
        DoctorCheck(name: "document", outcome: .skipped, detail: "no cache to read")
    }

    /// Always a warning: the other tools' format cannot be sealed; the advice says what to do.
    static func protection(_ cache: MSALSharedCache) -> DoctorCheck {
        let level: ProtectionLevel = cache.kind == .msalFile ? .plaintextFile : .keyringItem
        return DoctorCheck(
            name: "protection", outcome: .warning, detail: "\(level.rawValue): \(level.description)",
            advice: SharedCacheText.advice(cache).joined(separator: "; "))
    }
}
