/// One change to a group's records.
enum RecordChange: Sendable {
    case put(Record)
    case delete(RecordID)

    var id: RecordID {
        switch self {
        case .put(let record): record.id
        case .delete(let id): id
        }
    }
}
