import Dispatch

extension DispatchTime {
    /// The moment `duration` from now, for Dispatch's timers, which count whole nanoseconds.
    static func now(after duration: Duration) -> DispatchTime {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return .now() + .nanoseconds(overflow ? .max : Int(whole &+ attoseconds / 1_000_000_000))
    }
}
