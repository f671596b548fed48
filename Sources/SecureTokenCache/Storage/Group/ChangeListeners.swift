import Synchronization

/// The ``CacheStore/changes()`` streams of a store that announces its own commits (the memory
/// store, and a shared cache's store for its own and its neighbours' commits): each stream gets
/// an element per announcement, coalesced for a slow consumer, and leaves when it is dropped.
final class ChangeListeners: Sendable {
    private let listeners = Mutex<(next: UInt64, all: [UInt64: AsyncStream<Void>.Continuation])>((0, [:]))

    /// A new stream, yielding after each later ``yieldToAll()``.
    func stream() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = listeners.withLock { listeners in
            listeners.next += 1
            listeners.all[listeners.next] = continuation
            return listeners.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.listeners.withLock { $0.all.removeValue(forKey: id) }
        }
        return stream
    }

    /// Wakes every stream.
    func yieldToAll() {
        for listener in listeners.withLock({ Array($0.all.values) }) { listener.yield(()) }
    }
}
