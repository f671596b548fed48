import Foundation

/// How long the tests that repeat a scenario many times run under a sanitizer's pass
/// (`scripts/sanitize` sets `STC_SANITIZER`).
///
/// Such a pass checks the memory and the threads of the code each scenario runs, which a few
/// repetitions run as much as many; each instrumented process takes several times as long, and
/// CI runs the pass beside the main suite at the lowest priority. The plain pass keeps every
/// repetition: the soaks' random kills and the refresh rounds find what only many of them meet.
public enum Sanitizer {
    /// Whether these tests run under a sanitizer.
    public static let isActive = ProcessInfo.processInfo.environment["STC_SANITIZER"] != nil

    /// `count` in a plain pass; under a sanitizer, `count` divided by `divisor`, at least one.
    public static func fewer(_ count: Int, dividedBy divisor: Int) -> Int {
        isActive ? max(1, count / divisor) : count
    }
}
