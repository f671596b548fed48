import Synchronization

/// A value set once and awaited by any number of tasks: the first ``fulfil(_:)`` wins, later ones
/// are ignored, and a task that awaits after it gets the value at once.
final class OneShot<Value: Sendable>: Sendable {
    private let state = Mutex<(value: Value?, waiters: [CheckedContinuation<Value, Never>])>((nil, []))

    /// Sets the value unless it is set; returns whether this call set it.
    @discardableResult
    func fulfil(_ value: Value) -> Bool {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, Never>]? in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiters = [] }
            return state.waiters
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(returning: value) }
        return true
    }

    /// The value, once it is set.
    func value() async -> Value {
        await withCheckedContinuation { continuation in
            let value = state.withLock { state -> Value? in
                if let value = state.value { return value }
                state.waiters.append(continuation)
                return nil
            }
            if let value { continuation.resume(returning: value) }
        }
    }
}
