import Logging
import Synchronization

/// Keeps every message logged through ``logger``, with its level and metadata, for tests that
/// check what the library tells an operator (and what it must never tell).
final class CapturedLog: Sendable {
    /// One logged message.
    struct Entry: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: Logger.Metadata

        /// The message and its metadata as one text, to search for what must not be there.
        var text: String { message + " " + metadata.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }
    }

    let entries = Mutex<[Entry]>([])

    /// A logger that records into this log, at every level.
    var logger: Logger {
        Logger(label: "test") { _ in Handler(log: self) }
    }

    /// The messages logged so far.
    var messages: [Entry] { entries.withLock { $0 } }

    struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            log.entries.withLock { $0.append(Entry(level: event.level, message: "\(event.message)", metadata: merged)) }
        }
    }
}
