internal import CLibsecret
import Dispatch
import Synchronization

/// A `GCancellable` that a timer cancels when a Secret Service call overruns its time limit.
///
/// libsecret's `*_sync` calls use GDBus's default timeout (25 s) for each round trip and have no
/// timeout parameter, and a call that runs into a prompt waits for the prompt. Every libsecret call
/// in this package therefore gets a deadline: when it passes, the cancellable is cancelled, the
/// call returns `G_IO_ERROR_CANCELLED`, and the caller reports ``TokenCacheError/Code/keyringTimeout``.
/// `GCancellable` is thread-safe, so the timer may cancel it from any thread.
final class KeyringDeadline: @unchecked Sendable {
    /// The cancellable to pass to the C call. Owned: unreferenced in `deinit`.
    let cancellable: UnsafeMutablePointer<GCancellable>
    /// 0 = armed, 1 = disarmed (the call returned first), 2 = fired (the call was cancelled).
    private let state = Atomic<UInt8>(0)

    /// A deadline `timeout` from now.
    init(timeout: Duration) {
        cancellable = g_cancellable_new()
        // The timer keeps this object (and so the cancellable) alive until it runs; a disarmed
        // deadline's timer does nothing.
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout.dispatchInterval) { [self] in
            if state.compareExchange(expected: 0, desired: 2, ordering: .acquiringAndReleasing).exchanged {
                g_cancellable_cancel(cancellable)
            }
        }
    }

    /// Stops the timer; call once the C call returned.
    func disarm() {
        _ = state.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing)
    }

    /// Whether the deadline passed and the call was cancelled.
    var hasFired: Bool { state.load(ordering: .acquiring) == 2 }

    deinit { CLibsecret_object_unref(cancellable) }

    /// Runs one blocking GLib call under a deadline and converts its `GError`.
    ///
    /// `body` gets the cancellable and the `GError **` out-parameter. A set `GError` is converted
    /// (and freed); if the deadline fired, the failure is reported as a timeout whatever the
    /// GError says.
    static func run<R>(
        _ operation: String,
        timeout: Duration,
        _ body: (UnsafeMutablePointer<GCancellable>, UnsafeMutablePointer<UnsafeMutablePointer<GError>?>) -> R
    ) throws -> R {
        let deadline = KeyringDeadline(timeout: timeout)
        var error: UnsafeMutablePointer<GError>?
        let result = body(deadline.cancellable, &error)
        deadline.disarm()
        if let error {
            if deadline.hasFired {
                let converted = TokenCacheError(consuming: error, operation: operation)
                throw TokenCacheError(
                    .keyringTimeout,
                    "\(operation) did not finish within \(timeout): \(TokenCacheError.advice(for: .keyringTimeout))",
                    underlying: converted.underlying
                )
            }
            throw TokenCacheError(consuming: error, operation: operation)
        }
        return result
    }
}
