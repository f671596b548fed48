import Synchronization

/// The partitions one ``RowStore`` keeps in memory, by keyed name, and its generation: the last
/// commit that touched them (or that could not say which partitions it touched), as this process
/// knows it. Commits to other partitions leave it where it is, so a lookup in a busy fleet stays
/// one atomic load until a commit reaches what the instance holds.
final class RowResidency: Sendable {
    private let kept = Mutex<Set<[UInt8]>>([])
    private let relevant = Atomic<UInt64>(0)

    /// The generation: one atomic load.
    var generation: UInt64 { relevant.load(ordering: .acquiring) }

    /// Moves the generation to `value` unless it is there already; it never goes back.
    func advance(to value: UInt64) {
        _ = relevant.max(value, ordering: .acquiringAndReleasing)
    }

    /// Moves the generation when a commit at `generation` touched a kept partition, or
    /// `partitions` is `nil` (it touched rows every process keeps, or too many to name).
    func hear(generation: UInt64, partitions: [[UInt8]]?) {
        guard let partitions else { return advance(to: generation) }
        if kept.withLock({ kept in partitions.contains { kept.contains($0) } }) { advance(to: generation) }
    }

    /// Whether the partition with this keyed name is kept.
    func keeps(_ partition: [UInt8]) -> Bool { kept.withLock { $0.contains(partition) } }

    /// Every partition kept.
    var all: [[UInt8]] { kept.withLock { Array($0) } }

    /// Keeps `partitions` from now on.
    func insert(_ partitions: [[UInt8]]) { kept.withLock { $0.formUnion(partitions) } }

    /// Stops keeping `partitions`.
    func remove(_ partitions: [[UInt8]]) { kept.withLock { $0.subtract(partitions) } }
}
