import Dispatch
import Synchronization

/// Work offered to another thread, whose owner takes its output back with ``take()``: the output
/// once the work is done, waiting for work under way, or `nil` at once when no thread had begun
/// it, which then never runs.
///
/// The owner never waits for a thread to come free, so it may offer work from any thread,
/// a busy pool's included, and do the work itself when ``take()`` gives `nil`.
final class BackgroundJob<Output: Sendable>: Sendable {
    private enum State {
        case offered
        case running
        case done(Output?)
        case taken
    }

    private let state = Mutex(State.offered)
    private let finished = DispatchSemaphore(value: 0)
    private let cancelled = Atomic(false)

    /// Offers `work` to another thread. `work` is told whether its owner has stopped wanting its
    /// output (``cancel()``), so that it can stop early; it returns `nil` for no output.
    init(_ work: @escaping @Sendable (_ isCancelled: () -> Bool) -> Output?) {
        DispatchQueue.global().async { [self] in
            let begun = state.withLock { state in
                guard case .offered = state else { return false }
                state = .running
                return true
            }
            guard begun else { return }
            let output = work { cancelled.load(ordering: .relaxed) }
            state.withLock { $0 = .done(output) }
            finished.signal()
        }
    }

    /// Tells the work that its output is no longer wanted.
    func cancel() {
        cancelled.store(true, ordering: .relaxed)
    }

    /// The work's output: once it is done (waiting for it while it runs), or `nil` when no thread
    /// had begun it or the output was taken before.
    func take() -> Output? {
        let begun = state.withLock { state in
            switch state {
            case .offered, .taken:
                state = .taken
                return false
            case .running, .done:
                return true
            }
        }
        guard begun else { return nil }
        finished.wait()
        return state.withLock { state in
            defer { state = .taken }
            guard case .done(let output) = state else { return nil }
            return output
        }
    }
}
