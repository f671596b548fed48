/// Damage to files, read from a fuzz input, for the targets that damage something real (a sealed
/// snapshot, a journal, a group's files) instead of parsing the input itself.
///
/// The input is a list of operations, each an operation byte and its operands: the byte's low
/// four bits choose the file (modulo how many there are), bits 4-5 the operation:
/// - 0, set: offset u16le, value (the offset wraps around the file's size);
/// - 1, cut: length u16le (wrapping around the size plus one);
/// - 2, append: a count byte, then that many bytes;
/// - 3, replace: the file becomes the rest of the input.
/// An operation whose operands are missing ends the list.
struct FuzzEdits {
    /// The files, edited.
    var files: [[UInt8]]
    /// The lowest offset each file differs from its original at (`nil`: unchanged).
    var firstChange: [Int?]

    /// Applies the operations in `input` to `files`.
    init(_ input: ArraySlice<UInt8>, to files: [[UInt8]]) {
        let originals = files
        self.files = files
        var rest = input
        func take(_ count: Int) -> ArraySlice<UInt8>? {
            guard rest.count >= count else { return nil }
            defer { rest = rest.dropFirst(count) }
            return rest.prefix(count)
        }
        func word() -> Int? { take(2).map { Int($0.first!) | Int($0.last!) << 8 } }
        edits: while let operation = take(1)?.first {
            let file = Int(operation & 0x0F) % files.count
            switch (operation >> 4) & 3 {
            case 0:
                guard let offset = word(), let value = take(1)?.first else { break edits }
                if !self.files[file].isEmpty { self.files[file][offset % self.files[file].count] = value }
            case 1:
                guard let length = word() else { break edits }
                self.files[file].removeSubrange((length % (self.files[file].count + 1))...)
            case 2:
                guard let count = take(1)?.first, let bytes = take(Int(count)) else { break edits }
                self.files[file] += bytes
            default:
                self.files[file] = Array(rest)
                break edits
            }
        }
        firstChange = zip(originals, self.files).map { original, edited in
            if let index = zip(original, edited).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
                return index
            }
            return original.count == edited.count ? nil : min(original.count, edited.count)
        }
    }
}
