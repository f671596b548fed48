import Synchronization

/// How many of the pool's connections the process's advisory locks may hold at once, handed out
/// first come, first served.
///
/// A lock lives in a connection's session, so each lock waited for or held keeps one of the
/// pool's connections; and what a lock's holder does meanwhile (a refresh reads the group, then
/// writes the new tokens) needs another. As many refreshes at once as the pool has connections
/// would each hold one and wait for another that never comes, and fail as if the database were
/// down. With fewer slots than connections, one is always left for the holders' work.
final class LockSlots: Sendable {
    private struct State {
        var free: Int
        /// Those waiting for a slot, first come first: each is handed one (`true`) or gives up
        /// at its deadline (`false`), whichever fulfils it first.
        var waiting: [OneShot<Bool>] = []
    }

    private let state: Mutex<State>

    /// `count` slots, at least one.
    init(_ count: Int) {
        state = Mutex(State(free: max(1, count)))
    }

    /// Takes a slot, waiting for one at most `timeout`; returns whether it got one.
    func take(within timeout: Duration) async -> Bool {
        let turn = OneShot<Bool>()
        let waits = state.withLock { state -> Bool in
            guard state.free == 0 else {
                state.free -= 1
                return false
            }
            state.waiting.append(turn)
            return true
        }
        guard waits else { return true }
        let deadline = Task {
            try? await Task.sleep(for: timeout)
            if turn.fulfil(false) { state.withLock { $0.waiting.removeAll { $0 === turn } } }
        }
        let granted = await turn.value()
        deadline.cancel()
        return granted
    }

    /// Gives a slot back: to the first still waiting, or to the free ones.
    func give() {
        state.withLock { state in
            while !state.waiting.isEmpty {
                // A waiter past its deadline is already fulfilled, and refuses the slot.
                if state.waiting.removeFirst().fulfil(true) { return }
            }
            state.free += 1
        }
    }
}
