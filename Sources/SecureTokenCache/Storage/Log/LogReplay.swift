/// Replays a log's committed changes into the set of records they leave.
///
/// A log is mostly one large transaction (the checkpoint a compaction wrote, or a first
/// import) and some small ones after it, and any transaction may name a record more than once.
/// Deduplicating through a `[RecordID: Record]` dictionary would hash every name with SipHash
/// and move every record into and out of the dictionary. Here each change comes with a cheap ``RecordNameHash`` computed while its batch
/// opened, an open-addressing table of positions finds the last change of every record, and
/// names are compared only when their hashes are equal (real duplicates, in practice); the
/// records themselves are moved, never copied.
enum LogReplay {
    /// The records `log` leaves, its changes applied in order: for every record its last change,
    /// if that is a put. In log order of those last changes, with their name hashes. Takes the
    /// log's changes (and leaves it with none), so the records can be moved out of them.
    static func liveRecords(_ log: inout ScannedLog) -> (records: [Record], nameHashes: [UInt64]) {
        var changes: [RecordChange] = []
        swap(&changes, &log.changes)
        let hashes = log.nameHashes
        let count = changes.count
        guard count > 0 else { return ([], []) }
        guard count < Int(Int32.max), hashes.count == count else {
            let records = replayedThroughDictionary(changes)
            return (records, records.map { RecordNameHash.hash($0.id) })
        }
        // A power of two at least twice the number of changes: short probe runs.
        var capacity = 1
        while capacity < 2 * count { capacity <<= 1 }
        let mask = capacity - 1
        var slots = [Int32](repeating: -1, count: capacity)
        // Whether a change is the last of its record and a put: what the group holds.
        var live = [Bool](repeating: false, count: count)
        var liveCount = 0
        changes.withUnsafeBufferPointer { changes in
            for position in 0..<count {
                let hash = hashes[position]
                var slot = Int(truncatingIfNeeded: hash ^ (hash >> 29)) & mask
                while true {
                    let other = Int(slots[slot])
                    if other < 0 {
                        slots[slot] = Int32(position)
                        break
                    }
                    if hashes[other] == hash, changes[other].id == changes[position].id {
                        if live[other] {
                            live[other] = false
                            liveCount -= 1
                        }
                        slots[slot] = Int32(position)
                        break
                    }
                    slot = (slot + 1) & mask
                }
                if case .put = changes[position] {
                    live[position] = true
                    liveCount += 1
                }
            }
        }
        var liveHashes: [UInt64] = []
        liveHashes.reserveCapacity(liveCount)
        for position in 0..<count where live[position] { liveHashes.append(hashes[position]) }
        let placeholder = RecordChange.delete(RecordID(kind: .accessToken, name: ""))
        let records = changes.withUnsafeMutableBufferPointer { changes in
            [Record](unsafeUninitializedCapacity: liveCount) { records, initialized in
                for position in 0..<count where live[position] {
                    // Moved out, and a placeholder that owns nothing put back, so `changes`
                    // stays a valid array for its release.
                    let change = (changes.baseAddress! + position).move()
                    (changes.baseAddress! + position).initialize(to: placeholder)
                    switch consume change {
                    case .put(let record):
                        (records.baseAddress! + initialized).initialize(to: record)
                        initialized += 1
                    case .delete: break
                    }
                }
            }
        }
        return (records, liveHashes)
    }

    /// ``liveRecords(_:)`` the slow, simple way: for more changes than the table's 32-bit
    /// positions can name (a log of hundreds of gigabytes).
    private static func replayedThroughDictionary(_ changes: [RecordChange]) -> [Record] {
        var records: [RecordID: Record] = [:]
        for change in changes {
            switch change {
            case .put(let record): records[record.id] = record
            case .delete(let id): records[id] = nil
            }
        }
        return Array(records.values)
    }
}
