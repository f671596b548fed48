import Glibc

/// Asks the kernel to back a large buffer with huge pages where it can: the first write to each
/// 4 kB page of a large fresh buffer otherwise takes a fault of its own, which costs an export of
/// a large group about as much as writing it.
enum HugePages {
    /// Below this capacity, faults cost little and the buffer may come from reused heap memory.
    static let threshold = 32 << 20

    /// Advises huge pages for the whole 2 MB pages inside `buffer`'s capacity.
    static func advise(_ buffer: inout [UInt8]) {
        guard buffer.isEmpty, buffer.capacity >= threshold else { return }
        // An empty array need not show its storage's address: one element makes it.
        buffer.append(0)
        let base = buffer.withUnsafeMutableBufferPointer { UInt(bitPattern: $0.baseAddress) }
        buffer.removeAll(keepingCapacity: true)
        advise(base: base, count: buffer.capacity)
    }

    /// Advises huge pages for the whole 2 MB pages inside `buffer`, which nothing has written yet
    /// (a read's destination).
    static func advise(_ buffer: UnsafeMutableRawBufferPointer) {
        guard buffer.count >= threshold, let address = buffer.baseAddress else { return }
        advise(base: UInt(bitPattern: address), count: buffer.count)
    }

    private static func advise(base: UInt, count: Int) {
        let page: UInt = 2 << 20
        let start = (base + page - 1) & ~(page - 1)
        let end = (base + UInt(count)) & ~(page - 1)
        guard end > start else { return }
        _ = madvise(UnsafeMutableRawPointer(bitPattern: start), Int(end - start), MADV_HUGEPAGE)
    }
}
