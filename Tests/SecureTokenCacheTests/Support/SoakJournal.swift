import Foundation
import Testing

/// A soak worker's journal (`stc-testhelper soak`, see its `Soak` for the lines), read as it
/// grows: every incarnation of the worker appends to the same file.
struct SoakJournal {
    /// A group position a worker's index snapshot was at.
    struct Cursor: Hashable {
        var generation: UInt64
        var epoch: UInt64
    }

    /// One token register: the access token of `worker`'s client for `account` and `scope`.
    struct Register: Hashable {
        var worker: Int
        var account: Int
        var scope: Int
    }

    enum Event {
        /// An incarnation had opened the group at `cursor` by `time`.
        case start(incarnation: Int, cursor: Cursor, time: UInt64)
        /// A store of `secret` into `register` began at `time`.
        case put(Register, secret: String, time: UInt64)
        /// A sign-out of the worker's `account` began at `time`.
        case signOut(account: Int, time: UInt64)
        /// The put or sign-out before it returned at `time`.
        case ack(cursor: Cursor, time: UInt64)
        /// A lookup of `register` between `start` and `end` found `secret`.
        case get(Register, secret: String?, start: UInt64, end: UInt64, cursor: Cursor)
    }

    let path: String
    /// The worker whose journal this is.
    let worker: Int
    private(set) var events: [Event] = []
    /// Operations that returned: acknowledged puts and sign-outs, and lookups.
    private(set) var completedOperations = 0
    private var offset: UInt64 = 0

    init(path: String, worker: Int) {
        self.path = path
        self.worker = worker
    }

    /// Reads the lines appended since the last read. A line without its newline is left for the
    /// next read: a worker writes each line whole, so only a reader racing it sees part of one.
    mutating func read() throws {
        guard let file = FileHandle(forReadingAtPath: path) else { return }
        defer { try? file.close() }
        try file.seek(toOffset: offset)
        guard let data = try file.readToEnd(), let end = data.lastIndex(of: UInt8(ascii: "\n")) else { return }
        offset += UInt64(end - data.startIndex + 1)
        for line in data[..<end].split(separator: UInt8(ascii: "\n")) {
            let event = try Self.parse(String(decoding: line, as: UTF8.self), worker: worker)
            switch event {
            case .ack, .get: completedOperations += 1
            default: break
            }
            events.append(event)
        }
    }

    static func parse(_ line: String, worker: Int) throws -> Event {
        let fields = line.split(separator: " ").map(String.init)
        func number(_ index: Int) throws -> UInt64 {
            try #require(index < fields.count ? UInt64(fields[index]) : nil, "journal of worker \(worker): \(line)")
        }
        func int(_ index: Int) throws -> Int { Int(try number(index)) }
        switch fields.first {
        case "start" where fields.count == 6:
            return .start(
                incarnation: try int(1), cursor: Cursor(generation: try number(3), epoch: try number(4)), time: try number(5))
        case "put" where fields.count == 5:
            return .put(Register(worker: worker, account: try int(1), scope: try int(2)), secret: fields[3], time: try number(4))
        case "signout" where fields.count == 3:
            return .signOut(account: try int(1), time: try number(2))
        case "ack" where fields.count == 4:
            return .ack(cursor: Cursor(generation: try number(1), epoch: try number(2)), time: try number(3))
        case "get" where fields.count == 9:
            return .get(
                Register(worker: try int(1), account: try int(2), scope: try int(3)), secret: fields[4] == "-" ? nil : fields[4],
                start: try number(5), end: try number(6), cursor: Cursor(generation: try number(7), epoch: try number(8)))
        default:
            return try #require(Optional<Event>.none, "journal of worker \(worker): not a journal line: \(line)")
        }
    }
}
