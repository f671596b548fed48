import Glibc

/// Times as people read them: "59m", "2d 3h", "expired 5m ago", "2026-11-22 04:21:03 UTC".
enum TimeText {
    /// A duration in its two largest units: "2d 3h", "1h 5m", "42s".
    static func duration(_ seconds: Int64) -> String {
        let total = max(0, seconds)
        if total < 60 { return "\(total)s" }
        let days = total / 86_400
        let hours = total % 86_400 / 3_600
        let minutes = total % 3_600 / 60
        if days > 0 { return hours > 0 ? "\(days)d \(hours)h" : "\(days)d" }
        if hours > 0 { return minutes > 0 ? "\(hours)h \(minutes)m" : "\(hours)h" }
        return "\(minutes)m"
    }

    /// Time left until `expiresOn`: "59m", or "expired 5m ago"; "" when there is no expiry.
    static func expiresIn(_ expiresOn: Int64?, now: Int64) -> String {
        guard let expiresOn else { return "" }
        return expiresOn > now ? duration(expiresOn - now) : "expired \(duration(now - expiresOn)) ago"
    }

    /// An instant in UTC: "2026-11-22 04:21:03 UTC".
    static func utc(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return String(seconds) }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) UTC"
    }
}
