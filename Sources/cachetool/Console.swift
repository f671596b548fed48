import Glibc

/// Standard output, standard error and the terminal, without Foundation (start-up time matters
/// for a tool scripts call in loops).
enum Console {
    /// Writes `text` to standard output as is.
    static func out(_ text: String) { write(STDOUT_FILENO, text) }

    /// Writes `text` and a newline to standard output.
    static func line(_ text: String = "") { write(STDOUT_FILENO, text + "\n") }

    /// Writes `text` and a newline to standard error.
    static func error(_ text: String) { write(STDERR_FILENO, text + "\n") }

    /// A note for a person on standard error, so it never mixes into data on standard output.
    static func note(_ text: String) { error("cachetool: note: \(text)") }

    /// Writes every byte, retrying short writes and interruptions.
    static func write(_ descriptor: Int32, _ text: String) {
        var text = text
        _ = text.withUTF8 { write(descriptor, bytes: $0) }
    }

    /// Writes every byte, retrying short writes and interruptions. Returns `false` on an error.
    @discardableResult
    static func write(_ descriptor: Int32, bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    /// Whether standard input is a terminal a person can answer a question on.
    static var inputIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    /// Asks `question` on standard error and reads a yes/no answer from standard input.
    static func confirm(_ question: String) -> Bool {
        write(STDERR_FILENO, "\(question) [y/N] ")
        guard let answer = readLine() else { return false }
        return ["y", "yes"].contains(answer.trimmingSpaces.lowercased())
    }

    /// The seconds since the Unix epoch.
    static var now: Int64 { Int64(time(nil)) }

    /// The value of an environment variable.
    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The description of an `errno` value.
    static func describe(errno code: Int32) -> String { String(cString: strerror(code)) }

    /// How long ago the wall-clock time `time` (a file's time) was.
    static func age(of time: timespec) -> Duration {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return .seconds(now.tv_sec - time.tv_sec) + .nanoseconds(now.tv_nsec - time.tv_nsec)
    }

    /// `duration` in seconds, to a tenth ("0.3 s", "12.0 s").
    static func seconds(_ duration: Duration) -> String {
        let tenths = max(0, duration.components.seconds * 10 + duration.components.attoseconds / 100_000_000_000_000_000)
        return "\(tenths / 10).\(tenths % 10) s"
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and newlines.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
