/// The one error type every throwing API of this package throws.
///
/// Match on ``code``; show ``message`` to a person: it says what happened and what to do, and it
/// never contains a token, a user name or any other secret. A C library's own report, when there
/// was one, is kept in ``underlying``.
///
/// ## What an app must handle
///
/// Token acquisition (``TokenCache/acquireTokenSilently(scopes:account:authority:forceRefresh:endpoint:timeout:)``)
/// ends in one of these, and each asks for a different reaction:
///
/// | code | what happened | what it carries | what the app does |
/// |---|---|---|---|
/// | ``Code/interactionRequired`` | no refresh token the app may use, the app signed out of the account, or the server answered `invalid_grant` / `interaction_required` | ``server``: `error`, `suberror` (`basic_action`, `consent_required`, `client_mismatch`, ...) and `correlationId` from the server's JSON `correlation_id`, `httpStatus` (no ``server`` when the cache alone decided) | start an interactive sign-in; log the correlation id for support |
/// | ``Code/serverDeclinedScopes`` | the server issued a token, for fewer scopes than asked | ``declinedScopes``: the issued token as an ``AuthenticationResult`` (already cached), the granted and the declined scopes | use the token for what was granted, or ask the user to consent to the rest interactively |
/// | ``Code/network`` | the token endpoint could not be reached or did not answer in time | nothing was stored | retry later (a still-valid cached token past `refresh_on` is served instead of this error) |
/// | ``Code/serverError`` | the server answered with an error that is not the user's to fix (`invalid_client`, HTTP 5xx, not JSON), or answered for another account than the refresh token's | ``server`` when the answer was JSON; nothing was stored | retry later or check the app registration |
/// | ``Code/malformedResponse`` | a token answer missing fields (or, for a migrated ADAL account, without `client_info`) | nothing was stored | retry later; report if it persists |
/// | ``Code/lockTimeout`` | another process's refresh of the same account did not finish in time | — | retry |
///
/// Everything else is about the cache itself, not about the user: input errors
/// (``Code/malformedCache``, ``Code/invalidArgument``, ``Code/notFound``,
/// ``Code/multipleAccounts``), storage and keys (``Code/storeCorrupted``, ``Code/wrongKey``,
/// ``Code/insecurePermissions``, ``Code/diskFull``, ``Code/ioFailure``, ``Code/cryptoFailure``,
/// ``Code/unsupportedFormat``) and the Secret Service (``Code/noSessionBus`` ... ``Code/keyringFailure``);
/// an app shows ``message`` and, for the storage codes, stops using the group.
///
/// ```swift
/// do {
///     _ = try CacheGroup.open()
/// } catch let error as TokenCacheError {
///     switch error.code {
///     case .collectionLocked, .noSessionBus, .secretServiceUnavailable:
///         print("the keyring is not usable: \(error.message)")
///     default:
///         print(error)  // code and message; never a secret
///     }
/// }
/// ```
///
/// <doc:ErrorsAndWhatToDo> says what to do about each code.
public struct TokenCacheError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. Extensible: new codes may be added in later versions.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A stable, machine-readable name such as `"collectionLocked"`.
        public let name: String

        private init(_ name: String) { self.name = name }

        /// A description for people; never contains a secret.
        public var description: String { name }

        // MARK: Input

        /// A token response from the server could not be understood; nothing was stored.
        public static let malformedResponse = Code("malformedResponse")
        /// An MSAL (or ADAL) JSON cache could not be read; nothing was imported.
        public static let malformedCache = Code("malformedCache")
        /// An argument was invalid (an empty client id, an unknown store kind, ...).
        public static let invalidArgument = Code("invalidArgument")
        /// The requested entry, account or group does not exist.
        public static let notFound = Code("notFound")
        /// More than one account is signed in where one was expected.
        public static let multipleAccounts = Code("multipleAccounts")

        // MARK: Storage and keys

        /// A stored record failed to open: the group's files are damaged or were tampered with.
        /// The damaged file was copied to the group's `quarantine/` folder.
        public static let storeCorrupted = Code("storeCorrupted")
        /// The key does not open this group: a wrong passphrase or a wrong key file.
        public static let wrongKey = Code("wrongKey")
        /// A file or directory has permissions or ownership that would expose tokens.
        public static let insecurePermissions = Code("insecurePermissions")
        /// Another process held the group's lock for longer than the configured wait.
        public static let lockTimeout = Code("lockTimeout")
        /// The disk (or the file-size limit) is full; the write was rolled back.
        public static let diskFull = Code("diskFull")
        /// A file-system operation failed.
        public static let ioFailure = Code("ioFailure")
        /// A libsodium call failed.
        public static let cryptoFailure = Code("cryptoFailure")
        /// The group was written by a newer version of this library.
        public static let unsupportedFormat = Code("unsupportedFormat")

        // MARK: Database
        /// The database did not answer in time, or cannot be reached (it is down, restarting, or
        /// the connection was lost); retry later. A write that failed this way may or may not
        /// have been committed, so read the group again before writing the same change.
        public static let databaseUnavailable = Code("databaseUnavailable")
        /// The database refused the request: wrong credentials, missing permissions, or a table
        /// dropped or changed by hand. The message quotes the database's reason; fix the
        /// configuration or the database, then retry.
        public static let databaseFailure = Code("databaseFailure")
        // MARK: Secret Service

        /// No D-Bus session bus is reachable (`DBUS_SESSION_BUS_ADDRESS` unset or dead).
        public static let noSessionBus = Code("noSessionBus")
        /// The session bus has no Secret Service (`org.freedesktop.secrets`) on it.
        public static let secretServiceUnavailable = Code("secretServiceUnavailable")
        /// The keyring collection is locked; unlock it (or allow interaction) and retry.
        public static let collectionLocked = Code("collectionLocked")
        /// Unlocking needs a prompt, but the caller did not allow interaction.
        public static let interactionNotAllowed = Code("interactionNotAllowed")
        /// A Secret Service call did not answer in time.
        public static let keyringTimeout = Code("keyringTimeout")
        /// The Secret Service reported another failure.
        public static let keyringFailure = Code("keyringFailure")

        // MARK: Token acquisition

        /// The user must sign in interactively: no usable refresh token, the app signed out of
        /// the account, or the server answered `invalid_grant` / `interaction_required`. When
        /// the server said so, ``TokenCacheError/server`` has its `error`, `suberror` and
        /// `correlation_id`.
        public static let interactionRequired = Code("interactionRequired")
        /// The server issued a token but declined some of the requested scopes. The token was
        /// cached; ``TokenCacheError/declinedScopes`` carries it with the granted and the
        /// declined scopes.
        public static let serverDeclinedScopes = Code("serverDeclinedScopes")
        /// The token endpoint could not be reached, or did not answer in time.
        public static let network = Code("network")
        /// The token endpoint answered with an error that is not the user's to fix.
        public static let serverError = Code("serverError")
    }

    /// A C library's own report of the failure.
    public enum Underlying: Sendable, Equatable, CustomStringConvertible {
        /// A GLib `GError` (domain, code, message), copied before it was freed.
        case gError(domain: String, code: Int32, message: String)
        /// A libsodium function's return code.
        case sodium(function: String, returnCode: Int32)
        /// An `errno` value from a system call.
        case posix(call: String, errno: Int32)

        /// A description for people; never contains a secret.
        public var description: String {
            switch self {
            case .gError(let domain, let code, let message): "\(domain) \(code): \(message)"
            case .sodium(let function, let returnCode): "\(function) returned \(returnCode)"
            case .posix(let call, let errno): "\(call): errno \(errno)"
            }
        }
    }

    /// What the OAuth server said, for ``Code/interactionRequired``, ``Code/serverError`` and
    /// ``Code/serverDeclinedScopes``.
    public struct ServerResponse: Sendable, Equatable {
        /// The OAuth `error` value, such as `invalid_grant`.
        public var error: String?
        /// The Microsoft `suberror` value, such as `consent_required` or `client_mismatch`.
        public var suberror: String?
        /// The server's `correlation_id`, for support requests.
        public var correlationId: String?
        /// The HTTP status code.
        public var httpStatus: Int?

        /// A server answer with the given parts.
        public init(error: String? = nil, suberror: String? = nil, correlationId: String? = nil, httpStatus: Int? = nil) {
            self.error = error
            self.suberror = suberror
            self.correlationId = correlationId
            self.httpStatus = httpStatus
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What happened and what to do about it, for a person. Never contains a secret.
    public var message: String
    /// A C library's own report, when there was one.
    public var underlying: Underlying?
    /// What the OAuth server said, when the failure came from it.
    public var server: ServerResponse?
    /// For ``Code/serverDeclinedScopes``: the token that was issued (and cached), and the
    /// granted and declined scopes.
    public var declinedScopes: DeclinedScopes? = nil

    /// An error with the given parts.
    public init(_ code: Code, _ message: String, underlying: Underlying? = nil, server: ServerResponse? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
        self.server = server
    }

    /// A description for people; never contains a secret.
    public var description: String {
        var text = "\(code): \(message)"
        if let underlying { text += " (\(underlying))" }
        if let server {
            let parts = [
                server.error, server.suberror.map { "suberror \($0)" }, server.correlationId.map { "correlation id \($0)" },
            ]
            .compactMap { $0 }
            if !parts.isEmpty { text += " [server: \(parts.joined(separator: ", "))]" }
        }
        return text
    }
}
