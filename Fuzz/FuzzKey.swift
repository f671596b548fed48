/// The known key the targets seal with: sealed frames made with it, then damaged, reach the
/// parsers' authenticated paths, which random bytes never pass.
enum FuzzKey {
    /// A sealer for the group `fuzz` under a fixed key.
    static func sealer() -> RecordSealer {
        let bytes = [UInt8](repeating: 0x5A, count: SecretKey.byteCount)
        do {
            return try bytes.withUnsafeBytes { try RecordSealer(groupKey: SecretKey(copying: $0), groupName: "fuzz") }
        } catch {
            fatalError("cannot make the fuzz sealer: \(error)")
        }
    }

    /// Changes as text, in order, for comparing what a reader returned with what was written.
    static func describe(_ changes: some Sequence<RecordChange>) -> [String] {
        changes.map { change in
            switch change {
            case .put(let record): "put \(record.id.kind) \(record.id.name) \(Array(record.payload))"
            case .delete(let id): "delete \(id.kind) \(id.name)"
            }
        }
    }
}
