import Dispatch
import Glibc
import Synchronization

/// Gives the C heap's free pages back to the system after work that allocated and freed a lot
/// at once: importing a large document or opening a large group. glibc keeps what is freed for
/// reuse, so without this a process that imported a large document would keep the import's peak
/// resident for as long as it runs, though the group it holds needs a fraction of it.
enum HeapTrim {
    /// Below this much transient work, what the heap keeps is not worth a walk of it.
    static let threshold = 8 << 20

    /// How long the process goes without such work before the trim: a burst of it (imports,
    /// reloads of a shared cache after each of another SDK's writes, a benchmark's loop) walks the
    /// heap once, after the last, instead of giving back pages the next would take again.
    static let quietPeriod = DispatchTimeInterval.seconds(1)

    /// Whether a trim is scheduled, and when the last large work was done.
    private static let schedule = Mutex((pending: false, lastWork: DispatchTime.now()))

    /// Trims the heap, on another thread, once the process has done no work of at least
    /// ``threshold`` bytes for ``quietPeriod``, if the work just done handled that much: the
    /// caller does not wait for the walk of the heap, and a tool that exits right after does
    /// not pay for it.
    static func after(handling bytes: Int) {
        guard bytes >= threshold, mallocTrim != nil else { return }
        let first = schedule.withLock { schedule in
            schedule.lastWork = .now()
            defer { schedule.pending = true }
            return !schedule.pending
        }
        if first { trim(at: .now() + quietPeriod) }
    }

    /// Trims the heap at `deadline`, or later if large work was done since the trim was scheduled.
    private static func trim(at deadline: DispatchTime) {
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: deadline) {
            let later: DispatchTime? = schedule.withLock { schedule in
                let due = schedule.lastWork + quietPeriod
                if due > .now() { return due }
                schedule.pending = false
                return nil
            }
            if let later {
                trim(at: later)
            } else {
                _ = mallocTrim?(0)
            }
        }
    }

    /// glibc's `malloc_trim`, looked up once: other C libraries (musl) have none, and its header
    /// is not part of the Glibc module.
    nonisolated(unsafe) private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()
}
