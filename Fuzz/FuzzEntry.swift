import Glibc
import Synchronization

/// libFuzzer's entry points. The binary holds every target; `STC_FUZZ_TARGET` names the one a
/// run exercises, so the library is compiled once for all of them.

/// Picks the target before the first input, and builds what it needs (sealed templates, a group
/// on disk) once instead of per input.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    let name = getenv("STC_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let target = FuzzTarget.named(name) else {
        let names = FuzzTarget.all.map(\.name).joined(separator: " ")
        let message = Array("set STC_FUZZ_TARGET to one of: \(names)\n".utf8)
        _ = message.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        exit(2)
    }
    FuzzTarget.selected.withLock { $0 = target }
    target.prepare()
    return 0
}

/// Runs the selected target's property check on one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = count == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: count))
    FuzzTarget.selected.withLock { $0 }?.check(input)
    return 0
}
