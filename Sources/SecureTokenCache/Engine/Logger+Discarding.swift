public import Logging

extension Logger {
    /// A logger that drops every message: the default of every part that takes a logger, so a
    /// library never writes to an app's output unless the app hands it a logger.
    public static let discarding = Logger(label: "SecureTokenCache", factory: { _ in SwiftLogNoOpLogHandler() })
}
