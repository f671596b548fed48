import Dispatch
import Synchronization

/// A group's generation as this process knows it, shared by every ``RowStore`` of the process
/// that opened the group in the same database: one atomic load for the lookup hot path, moved
/// forward by this process's commits at once and by the other processes' commits when their
/// announcement arrives.
final class RowGroupWatch: Sendable {
    private let generation = Atomic<UInt64>(0)
    /// See ``heardThrough``.
    private let heardThroughValue = Atomic<UInt64>(0)
    /// Announcements heard past ``heardThrough`` with a gap before them (arrived before the read
    /// that covers the gap), kept until the gap closes.
    private let heardAhead = Mutex<Set<UInt64>>([])
    /// Whether ``heardThrough`` has a starting point: a read of the generation after the watch
    /// was made, or after listening began.
    private let begun = Atomic<Bool>(false)
    private let listeners = ChangeListeners()
    /// The residencies of the process's stores that keep part of the group.
    private let residencies = Mutex<[WeakResidency]>([])
    /// Asks the database for the group's generation after announcements were missed.
    private let refresh: @Sendable () throws -> UInt64

    private init(refresh: @escaping @Sendable () throws -> UInt64) { self.refresh = refresh }

    /// The generation: one atomic load.
    var current: UInt64 { generation.load(ordering: .acquiring) }

    /// Every commit up to this generation reached the residencies in order: heard, or covered by
    /// a read after announcements may have been missed. One atomic load; it moves only after the
    /// residencies heard of the commits it covers, so a residency read after it has heard of
    /// every commit it covers.
    var heardThrough: UInt64 { heardThroughValue.load(ordering: .acquiring) }

    /// One element after each move of the generation.
    func changes() -> AsyncStream<Void> { listeners.stream() }

    /// Tells `residency` of every commit from now on.
    func register(_ residency: RowResidency) {
        residencies.withLock { all in
            all.removeAll { $0.residency == nil }
            all.append(WeakResidency(residency: residency))
        }
    }

    private struct WeakResidency {
        weak var residency: RowResidency?
    }

    /// A commit at `value` touched `partitions` (`nil`: perhaps any). With `coveringBefore`, the
    /// generation was read from the database after announcements may have been missed: every
    /// commit up to it counts as heard (as touching any partition).
    private func heard(_ value: UInt64, partitions: [[UInt8]]?, coveringBefore: Bool = false) {
        advance(to: value)
        for entry in residencies.withLock({ $0 }) { entry.residency?.hear(generation: value, partitions: partitions) }
        heardAhead.withLock { ahead in
            let through = heardThroughValue.load(ordering: .relaxed)
            if coveringBefore { begun.store(true, ordering: .relaxed) }
            if coveringBefore || value == through + 1 {
                moveHeardThrough(to: value, ahead: &ahead)
            } else if value > through, ahead.count < Self.mostHeardAhead {
                ahead.insert(value)
            }
        }
    }

    /// Moves ``heardThrough`` to `value` (unless it is past it) and on over the announcements
    /// heard ahead that follow without a gap; `ahead` is ``heardAhead``'s, its lock held.
    private func moveHeardThrough(to value: UInt64, ahead: inout Set<UInt64>) {
        var through = max(heardThroughValue.load(ordering: .relaxed), value)
        while ahead.remove(through + 1) != nil { through += 1 }
        if !ahead.isEmpty { ahead = ahead.filter { $0 > through } }
        heardThroughValue.store(through, ordering: .releasing)
    }

    /// The most announcements kept past a gap: a gap that does not close is a missed
    /// announcement, which the next reconnection's read covers.
    private static let mostHeardAhead = 4096

    /// Gives ``heardThrough`` its starting point when the watch has none: `read` reads the
    /// group's generation, which the watch was made before. A watch made while its database
    /// already listened has no read after listening began, and announcements after a generation
    /// it never heard of would wait for a gap that never closes.
    ///
    /// Every commit up to that generation counts as heard only while no store of the process
    /// keeps part of the group: such a store may have missed one, and a store that comes later
    /// reads the group after this read.
    func begin(reading read: () throws -> UInt64?) rethrows {
        guard !begun.load(ordering: .relaxed), let value = try read() else { return }
        residencies.withLock { all in
            guard all.allSatisfy({ $0.residency == nil }) else { return }
            heardAhead.withLock { ahead in
                moveHeardThrough(to: value, ahead: &ahead)
                begun.store(true, ordering: .relaxed)
            }
        }
    }

    /// Moves the generation to `value` unless it is there already (it never goes back), and
    /// wakes the listeners when it moved.
    func advance(to value: UInt64) {
        var seen = generation.load(ordering: .relaxed)
        while seen < value {
            let (exchanged, original) = generation.compareExchange(
                expected: seen, desired: value, successOrdering: .acquiringAndReleasing, failureOrdering: .relaxed)
            if exchanged {
                listeners.yieldToAll()
                return
            }
            seen = original
        }
    }

    // MARK: The process's watches

    private struct Key: Hashable {
        var database: ObjectIdentifier
        var group: [UInt8]
    }

    /// Every watch of the process, and the databases already listened to. Watches are never
    /// dropped: a process opens few groups, and a group opened again must find its generation.
    private static let all = Mutex<
        (
            watches: [Key: RowGroupWatch], listening: Set<ObjectIdentifier>, resynchronised: [ObjectIdentifier: Int],
            rounds: [ObjectIdentifier: UInt64]
        )
    >(([:], [], [:], [:]))

    /// How many times the watches of `database` read their generation after announcements may
    /// have been missed: once listening began, then after each reconnection (counted once every
    /// watch read it, reads that failed made again until they succeed). Until the first, the
    /// process does not hear other processes' commits; each moves the residencies of the watches
    /// then known as if every partition changed. `nil` when the process does not listen on
    /// `database`.
    static func resynchronisations(of database: any RowDatabase) -> Int? {
        let id = ObjectIdentifier(database)
        return all.withLock { $0.listening.contains(id) ? $0.resynchronised[id, default: 0] : nil }
    }

    /// The watch of group `group` in `database`, made (and the database listened to) on first use.
    static func watch(_ group: [UInt8], in database: any RowDatabase) -> RowGroupWatch {
        let id = ObjectIdentifier(database)
        let (watch, startListening) = all.withLock { all in
            let key = Key(database: id, group: group)
            if let watch = all.watches[key] { return (watch, false) }
            let watch = RowGroupWatch { [database] in
                guard let head = try database.head(of: group) else { return 0 }
                return head.generation
            }
            all.watches[key] = watch
            return (watch, all.listening.insert(id).inserted)
        }
        if startListening {
            database.listen { announcement in Self.hear(announcement, from: id) }
        }
        return watch
    }

    private static let resynchronising = DispatchQueue(label: "SecureTokenCache.RowGroupWatch.resynchronise")

    private static func hear(_ announcement: RowAnnouncement, from database: ObjectIdentifier) {
        switch announcement {
        case .committed(let group, let generation, let partitions):
            let watch = all.withLock { $0.watches[Key(database: database, group: group)] }
            watch?.heard(generation, partitions: partitions)
        case .resynchronise:
            let (watches, round) = all.withLock { all in
                all.rounds[database, default: 0] += 1
                return (all.watches.filter { $0.key.database == database }.map(\.value), all.rounds[database]!)
            }
            // Not on the caller's thread: it is the database's own, which the reads below wait for.
            resynchronising.async { resynchronise(watches, of: database, round: round, retryingAfter: firstRetry) }
        }
    }

    /// The wait before a failed read of ``resynchronise(_:of:round:retryingAfter:)`` is made
    /// again, doubled after each failure up to ``longestRetry``.
    private static let firstRetry: Duration = .milliseconds(200)
    /// The longest wait between two reads of a resynchronisation.
    private static let longestRetry: Duration = .seconds(5)

    /// Reads the generation of each of `watches` again after announcements may have been
    /// missed. A read that fails (the database answers the listener but not yet the pool, or
    /// went away again) is made again after `wait`, doubling, until it succeeds: until then the
    /// process answers from what it has, as through any outage, and then it catches up with
    /// every commit it missed. A later resynchronisation of the database (`round`) takes over.
    private static func resynchronise(
        _ watches: [RowGroupWatch], of database: ObjectIdentifier, round: UInt64, retryingAfter wait: Duration
    ) {
        var failed: [RowGroupWatch] = []
        for watch in watches {
            if let generation = try? watch.refresh() {
                watch.heard(generation, partitions: nil, coveringBefore: true)
            } else {
                failed.append(watch)
            }
        }
        let finished = all.withLock { all -> Bool in
            guard all.rounds[database] == round else { return true }
            if failed.isEmpty { all.resynchronised[database, default: 0] += 1 }
            return failed.isEmpty
        }
        guard !finished else { return }
        resynchronising.asyncAfter(deadline: .now(after: wait)) { [failed] in
            resynchronise(failed, of: database, round: round, retryingAfter: min(wait * 2, longestRetry))
        }
    }
}
