import SecureTokenCache

/// cachetool's documented exit codes. Scripts may rely on them; never renumber.
enum ExitStatus: Int32, CaseIterable {
    case ok = 0
    case failure = 1
    case usage = 2
    case notFound = 3
    case corruptStore = 4
    case wrongKey = 5
    case keyringUnavailable = 6
    case lockTimeout = 7
    case malformedInput = 8
    case aborted = 9
    case insecurePermissions = 10

    /// What the code means, for `--help` and docs/cachetool.md.
    var meaning: String {
        switch self {
        case .ok: "success"
        case .failure: "any other failure (I/O error, disk full, ...)"
        case .usage: "usage: bad option or argument, store not available, --yes needed"
        case .notFound: "not found: no such entry, account, client or input file"
        case .corruptStore: "the group's store is damaged or from a newer version"
        case .wrongKey: "wrong passphrase or key file"
        case .keyringUnavailable: "keyring unavailable: no session bus or Secret Service, or locked"
        case .lockTimeout: "another process held the group's lock too long"
        case .malformedInput: "malformed input: the file is not an MSAL JSON cache"
        case .aborted: "aborted: the confirmation was declined"
        case .insecurePermissions: "a file or folder has permissions that would expose tokens"
        }
    }

    /// The exit code for a library error.
    init(_ code: TokenCacheError.Code) {
        switch code {
        case .invalidArgument, .multipleAccounts: self = .usage
        case .notFound: self = .notFound
        case .storeCorrupted, .unsupportedFormat: self = .corruptStore
        case .wrongKey: self = .wrongKey
        case .noSessionBus, .secretServiceUnavailable, .collectionLocked, .interactionNotAllowed, .keyringTimeout,
            .keyringFailure:
            self = .keyringUnavailable
        case .lockTimeout: self = .lockTimeout
        case .malformedCache, .malformedResponse: self = .malformedInput
        case .insecurePermissions: self = .insecurePermissions
        default: self = .failure
        }
    }

    /// The exit-code table as it appears in `cachetool --help`.
    static var table: String {
        allCases.map { "  \($0.rawValue)\($0.rawValue < 10 ? " " : "")  \($0.meaning)" }.joined(separator: "\n")
    }
}

/// A failure cachetool reports itself: one line on stderr and a documented exit code.
struct CommandFailure: Error {
    var status: ExitStatus
    var message: String

    init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    /// The report of a library error: its message (never a secret) and its C-level cause.
    init(_ error: TokenCacheError) {
        var message = error.message
        if let underlying = error.underlying { message += " (\(underlying))" }
        self.init(ExitStatus(error.code), message)
    }
}
