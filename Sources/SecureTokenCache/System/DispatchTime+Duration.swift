package import Dispatch

extension Duration {
    /// The duration in whole nanoseconds (saturating).
    package var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : product &+ attoseconds / 1_000_000_000
    }
}

extension DispatchTime {
    /// The moment `duration` from now, for Dispatch's timers and semaphores.
    package static func now(after duration: Duration) -> DispatchTime {
        .now() + .nanoseconds(Int(duration.nanoseconds))
    }
}
