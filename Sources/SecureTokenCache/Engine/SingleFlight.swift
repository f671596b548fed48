import Synchronization

/// Concurrent callers asking for the same key share one run of the work: the first caller
/// starts it, the others wait for it, and every one of them gets its value or its error.
///
/// The work runs in a task of its own, so a caller that stops waiting (cancelled) neither
/// cancels it for the others nor leaves the key held: the key is free again as soon as the work
/// ends, whatever its outcome.
final class SingleFlight<Value: Sendable>: Sendable {
    private struct Flight {
        let id: UInt64
        let task: Task<Value, any Error>
        /// How many callers asked for it, the one that started it included.
        var callers: Int
    }

    private struct State {
        var flights: [String: Flight] = [:]
        var nextId: UInt64 = 0
    }

    private let state = Mutex(State())

    /// `work`'s outcome, shared with every caller that asks for `key` while it runs.
    func run(_ key: String, _ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        try await start(key, work).value
    }

    /// Starts `work` for `key` unless it is already running; returns the running task.
    @discardableResult
    func start(_ key: String, _ work: @escaping @Sendable () async throws -> Value) -> Task<Value, any Error> {
        state.withLock { state in
            if let running = state.flights[key] {
                state.flights[key]?.callers += 1
                return running.task
            }
            state.nextId += 1
            let id = state.nextId
            // The task cannot end before it is recorded: its last step takes this lock.
            let task = Task {
                defer { self.finish(key, id) }
                return try await work()
            }
            state.flights[key] = Flight(id: id, task: task, callers: 1)
            return task
        }
    }

    /// Whether work for `key` is running.
    func isRunning(_ key: String) -> Bool { state.withLock { $0.flights[key] != nil } }

    /// How many callers asked for the work running now for the keys `matching` accepts, starting
    /// it or joining it: a test of a stampede waits until every caller is in before the work
    /// answers, since a caller that comes after a run that failed rightly starts another.
    func callers(ofKeysWhere matching: (String) -> Bool) -> Int {
        state.withLock { state in state.flights.reduce(0) { matching($1.key) ? $0 + $1.value.callers : $0 } }
    }

    private func finish(_ key: String, _ id: UInt64) {
        state.withLock { state in
            if state.flights[key]?.id == id { state.flights[key] = nil }
        }
    }
}
