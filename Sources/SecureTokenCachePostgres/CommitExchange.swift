import Dispatch
import SecureTokenCache
import Synchronization

/// The meeting point of a commit's two halves: the database transaction (a task on the
/// ``DatabaseThread``), which reads the group under its lock and then waits for what to write,
/// and the caller's thread, which runs the engine's transaction body on what was read.
///
/// The body runs on the caller's thread, never in the task: it touches the caller's state, which
/// must not be touched after the caller gave up waiting. A caller that gave up (a timeout) or
/// whose body threw answers `nil`, and the transaction rolls back.
final class CommitExchange: Sendable {
    /// Thrown inside the transaction when there is nothing to write: rolls it back, and carries
    /// the head that was read.
    struct NothingToWrite: Error {
        var head: RowGroupHead
    }

    private enum State {
        case waiting
        case offered(RowGroupHead, [SealedRow], CheckedContinuation<RowCommit?, Never>)
        /// The caller gave up before the offer came: the offer is answered `nil` at once.
        case abandoned
        case answered
    }

    private let state = Mutex<State>(.waiting)
    private let outcome = Mutex<Result<RowGroupHead, any Error>?>(nil)
    /// Signalled once when the offer is made and once when the result is in.
    private let signal = DispatchSemaphore(value: 0)

    // MARK: The transaction's side

    /// Hands the caller what the transaction read, and waits for what to write (`nil`: roll
    /// back).
    func offer(_ head: RowGroupHead, _ rows: [SealedRow]) async -> RowCommit? {
        await withCheckedContinuation { continuation in
            let abandoned = state.withLock { state -> Bool in
                if case .abandoned = state { return true }
                state = .offered(head, rows, continuation)
                return false
            }
            if abandoned {
                continuation.resume(returning: nil)
            } else {
                signal.signal()
            }
        }
    }

    /// The transaction's outcome: the head after it, or the error.
    func finish(_ result: Result<RowGroupHead, any Error>) {
        outcome.withLock { $0 = result }
        signal.signal()
    }

    // MARK: The caller's side

    /// Waits for the offer; `nil` when the transaction finished without making one (it failed).
    /// After `timeout`, gives up: `task` is cancelled and
    /// ``TokenCacheError/Code/databaseUnavailable`` thrown.
    func waitForOffer(timeout: Duration, cancelling task: Task<Void, Never>) throws -> (RowGroupHead, [SealedRow])? {
        if signal.wait(timeout: .now(after: timeout)) == .timedOut {
            let late = state.withLock { state -> CheckedContinuation<RowCommit?, Never>? in
                if case .offered(_, _, let continuation) = state {
                    state = .answered
                    return continuation
                }
                state = .abandoned
                return nil
            }
            late?.resume(returning: nil)
            task.cancel()
            throw TokenCacheError(
                .databaseUnavailable,
                "the database did not answer within \(timeout) while locking the group for a write; nothing was written; "
                    + "check that it is running and reachable, then retry")
        }
        return state.withLock { state in
            if case .offered(let head, let rows, _) = state { return (head, rows) }
            return nil
        }
    }

    /// Answers the offer: what to write, or `nil` to roll back.
    func answer(_ rows: RowCommit?) {
        let continuation = state.withLock { state -> CheckedContinuation<RowCommit?, Never>? in
            guard case .offered(_, _, let continuation) = state else { return nil }
            state = .answered
            return continuation
        }
        continuation?.resume(returning: rows)
    }

    /// The outcome of a transaction that finished without an offer.
    func result() -> Result<RowGroupHead, any Error> {
        outcome.withLock { $0 } ?? .failure(TokenCacheError(.databaseFailure, "the transaction ended without an outcome"))
    }

    /// Waits for the transaction's outcome after the answer. After `timeout`, gives up:
    /// ``TokenCacheError/Code/databaseUnavailable``, saying the write may or may not be in.
    func waitForResult(timeout: Duration, cancelling task: Task<Void, Never>) throws -> Result<RowGroupHead, any Error> {
        guard signal.wait(timeout: .now(after: timeout)) == .success else {
            task.cancel()
            throw TokenCacheError(
                .databaseUnavailable,
                "the database did not confirm a write within \(timeout); it may or may not have been committed, so read "
                    + "the group again before repeating it")
        }
        return result()
    }
}
