import Dispatch
import Glibc

/// Gives the C heap's free pages back to the system after work that allocated and freed a lot
/// at once: importing a large document or opening a large group. glibc keeps what is freed for
/// reuse, so without this a process that imported a large document would keep the import's peak
/// resident for as long as it runs, though the group it holds needs a fraction of it.
enum HeapTrim {
    /// Below this much transient work, what the heap keeps is not worth a walk of it.
    static let threshold = 8 << 20

    /// Trims the heap, on another thread, if the work just done handled at least ``threshold``
    /// bytes: the caller does not wait for the walk of the heap, and a tool that exits right
    /// after does not pay for it.
    static func after(handling bytes: Int) {
        guard bytes >= threshold, let trim = mallocTrim else { return }
        DispatchQueue.global(qos: .utility).async { _ = trim(0) }
    }

    /// glibc's `malloc_trim`, looked up once: other C libraries (musl) have none, and its header
    /// is not part of the Glibc module.
    nonisolated(unsafe) private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()
}
