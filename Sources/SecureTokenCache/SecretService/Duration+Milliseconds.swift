import Dispatch

extension Duration {
    /// This duration for Dispatch (millisecond resolution, at least 1 ms).
    var dispatchInterval: DispatchTimeInterval { .milliseconds(max(1, milliseconds)) }

    /// This duration in whole milliseconds, clamped to `Int32` (GDBus timeouts are `gint` ms).
    var milliseconds: Int {
        let (seconds, attoseconds) = components
        let ms = seconds.multipliedReportingOverflow(by: 1000)
        guard !ms.overflow else { return Int(Int32.max) }
        return Int(min(Int64(Int32.max), max(0, ms.partialValue + attoseconds / 1_000_000_000_000_000)))
    }
}
