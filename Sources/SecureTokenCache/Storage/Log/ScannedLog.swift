/// What a scan of a log found: its complete transactions, and their changes in one flat array
/// (a large log holds few transactions and many records, so one array per transaction would
/// only add copies).
struct ScannedLog: Sendable {
    /// The changes of every transaction, in log order.
    var changes: [RecordChange] = []
    /// The ``RecordNameHash`` of each change's record, in the same order.
    var nameHashes: [UInt64] = []
    /// The transactions, in log order.
    var transactions: [ScannedTransaction] = []

    /// Nothing found.
    static let empty = ScannedLog()

    /// The offset just after the last transaction, or `nil` when there is none.
    var end: UInt64? { transactions.last?.end }

    /// The changes of the first `count` transactions, in order.
    func changes(ofFirst count: Int) -> ArraySlice<RecordChange> {
        count == 0 ? [] : changes[..<transactions[count - 1].changes.upperBound]
    }

    /// Keeps only the first `count` transactions (and their changes).
    mutating func keepFirst(_ count: Int) {
        guard count < transactions.count else { return }
        let end = count == 0 ? 0 : transactions[count - 1].changes.upperBound
        transactions.removeSubrange(count...)
        changes.removeSubrange(end...)
        nameHashes.removeSubrange(end...)
    }

    /// Appends the transactions of `other`, a scan of the bytes right after this one's.
    mutating func append(_ other: ScannedLog) {
        let offset = changes.count
        changes += other.changes
        nameHashes += other.nameHashes
        for transaction in other.transactions {
            var moved = transaction
            moved.changes = (transaction.changes.lowerBound + offset)..<(transaction.changes.upperBound + offset)
            transactions.append(moved)
        }
    }
}
