import Glibc

/// A read of an MSAL document straight into payloads (``MSALDocument/readDirectly(_:)``): from
/// its start, or from an entry's key on, so that a large document is read in two halves at once.
///
/// The second half's read starts at a guess: the first `"` after a `}`, a comma and whitespace
/// past the middle of the document. Only the read of the first half can tell whether that is
/// where an entry's key starts (the bytes could be inside a string, or a section's name), so it
/// stops only on meeting an entry's key exactly there, in a section of the kind the second read
/// assumed; from that point both reads would do the same, so the second's entries and sections
/// follow the first's. Anything else (the guess missed, the second read failed or never began)
/// and the first read goes on by itself, with the same result and the same errors as if it had
/// been alone.
struct DirectRead: ~Copyable {
    /// A section of entries being read: its name, kind and first entry.
    struct OpenSection {
        var name: String
        var kind: CredentialKind
        var first: Int
    }

    /// An entry read: its key (`nil` where its payload derives it, ``KeyText``), the key's
    /// ``StringHash``, its kind, and where its payload is.
    typealias Entry = (name: String?, hash: Int, kind: CredentialKind, block: Int, range: Range<Int>)

    /// What a read of a document's second half leaves for the read of its first.
    struct Rest: Sendable {
        /// The sections from the one the read began in (its name unknown, its range from 0).
        var sections: [(name: String, content: MSALDocument.Records.Section)]
        var entries: [Entry]
        /// The payloads, whose ordinals count from 1 at the read's first entry.
        var blocks: [[UInt8]]
    }

    /// The bytes of a document, for the read of its second half: the read of the first takes
    /// that read's output back (``BackgroundJob/take()``) before it returns, while they are alive.
    private struct SharedBytes: @unchecked Sendable {
        let buffer: UnsafeBufferPointer<UInt8>
    }

    /// How a read ended.
    private enum End {
        case finished
        /// At the entry key where the read of the second half began, in this section.
        case met(OpenSection)
        /// At what only the whole parse reads as it should.
        case notDirect
    }

    /// Where a read starts.
    private enum Start {
        /// At the document's `{`.
        case document
        /// At the key of an entry of this section (not its first).
        case entries(OpenSection)
    }

    /// Documents smaller than this are read in one piece: the other thread's start would cost
    /// about what it saves.
    static let twoHalvesThreshold = 1 << 17

    /// The kind of entries the read of a second half assumes it starts among: the largest
    /// section of a large cache.
    private static let assumedKind = CredentialKind.accessToken

    private var parser: JSONParser
    private var sections: [(name: String, content: MSALDocument.Records.Section)] = []
    private var entries: [Entry] = []
    private var blocks: PayloadBlocks
    private var members = PayloadWriter(capacity: 1024)

    private init(_ parser: JSONParser, expectedBytes: Int) {
        self.parser = parser
        blocks = PayloadBlocks(expectedBytes: expectedBytes)
    }

    /// The records of the document in `buffer`, or `nil` for what only the whole parse reads as it
    /// should. A large document's second half is read on another thread when one is free.
    static func records(of buffer: UnsafeBufferPointer<UInt8>) throws -> MSALDocument.Records? {
        let inTwoHalves = buffer.count >= twoHalvesThreshold && Processors.online > 1
        return try records(of: buffer, secondHalfAt: inTwoHalves ? guessedEntryKey(in: buffer, from: buffer.count / 2) : nil)
    }

    /// ``records(of:)``, with the read of a second half started at `guess` when given: on another
    /// thread, or with `secondHalfFirst` on this one before the first half (so that a test sees
    /// the first half meet it, where a small document's first half would often be done before
    /// another thread began the second).
    static func records(
        of buffer: UnsafeBufferPointer<UInt8>, secondHalfAt guess: Int?, secondHalfFirst: Bool = false
    ) throws -> MSALDocument.Records? {
        var parser = JSONParser(buffer)
        parser.skipWhitespace()
        guard parser.peek() == UInt8(ascii: "{") else { return nil }
        var read = DirectRead(parser, expectedBytes: buffer.count)
        guard let guess, guess > parser.position, guess < buffer.count else {
            guard case .finished = try read.read(from: .document, meeting: nil) else { return nil }
            return read.records()
        }
        let shared = SharedBytes(buffer: buffer)
        let readFirst = secondHalfFirst ? rest(of: shared, from: guess, isCancelled: { false }) : nil
        let job = secondHalfFirst ? nil : BackgroundJob<Rest> { rest(of: shared, from: guess, isCancelled: $0) }
        defer {
            job?.cancel()
            _ = job?.take()
        }
        switch try read.read(from: .document, meeting: guess) {
        case .finished: return read.records()
        case .notDirect: return nil
        case .met(let open):
            if open.kind == assumedKind, let rest = readFirst ?? job?.take(), read.follow(open, with: rest) {
                return read.records()
            }
            guard case .finished = try read.read(from: .entries(open), meeting: nil) else { return nil }
            return read.records()
        }
    }

    /// The read of a document's second half, from the entry key at `guess` on; `nil` when it
    /// fails (the read of the first half then goes on by itself, and meets the same failure).
    private static func rest(of shared: SharedBytes, from guess: Int, isCancelled: () -> Bool) -> Rest? {
        let parser = JSONParser(shared.buffer, at: guess, depth: 2)
        var read = DirectRead(parser, expectedBytes: shared.buffer.count - guess)
        let open = OpenSection(name: "", kind: assumedKind, first: 0)
        guard case .finished = try? read.read(from: .entries(open), meeting: nil, isCancelled: isCancelled) else {
            return nil
        }
        return read.rest()
    }

    /// Where an entry's key may start at or after `start`: the `"` after the next `}`, comma and
    /// whitespace, within a bounded look.
    static func guessedEntryKey(in buffer: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }
        let end = min(buffer.count, start + (1 << 20))
        var position = start
        while position < end {
            guard buffer[position] == UInt8(ascii: "}") else {
                position += 1
                continue
            }
            var next = position + 1
            while next < end, isWhitespace(buffer[next]) { next += 1 }
            if next < end, buffer[next] == UInt8(ascii: ",") {
                next += 1
                while next < end, isWhitespace(buffer[next]) { next += 1 }
                if next < end, buffer[next] == UInt8(ascii: "\"") { return next }
            }
            position += 1
        }
        return nil
    }

    /// Reads from `start` to the document's end, or to the entry key at `meeting`.
    private mutating func read(from start: Start, meeting: Int?, isCancelled: () -> Bool = { false }) throws -> End {
        var open: OpenSection?
        switch start {
        case .document:
            guard try parser.beginObject() else {
                try parser.finish()
                return .finished
            }
        case .entries(let section):
            open = section
        }
        repeat {
            let section: OpenSection
            if let resumed = open {
                section = resumed
                open = nil
            } else {
                let name = try parser.memberName().string
                guard !sections.contains(where: { $0.name == name }) else { return .notDirect }
                guard let kind = CredentialKind(sectionName: name) else {
                    sections.append((name: name, content: .unknown(try parser.parseValue())))
                    continue
                }
                guard parser.peek() == UInt8(ascii: "{") else { return .notDirect }
                guard try parser.beginObject() else {
                    sections.append((name: name, content: .entries(kind, entries.count..<entries.count)))
                    continue
                }
                section = OpenSection(name: name, kind: kind, first: entries.count)
            }
            switch try readEntries(of: section, meeting: meeting, isCancelled: isCancelled) {
            case .some(true):
                sections.append((name: section.name, content: .entries(section.kind, section.first..<entries.count)))
            case .some(false): return .met(section)
            case nil: return .notDirect
            }
        } while try parser.endOfMember()
        try parser.finish()
        return .finished
    }

    /// Reads a section's entries, from the key at the parser's position to the section's `}`:
    /// `true` then, `false` on meeting the key at `meeting`, `nil` for what only the whole parse
    /// reads as it should (or when `isCancelled`).
    private mutating func readEntries(of section: OpenSection, meeting: Int?, isCancelled: () -> Bool) throws -> Bool? {
        // The parser is held in a local while payloads are written: the closure below reads it
        // while the blocks and the scratch are being changed.
        var parser = self.parser
        defer { self.parser = parser }
        // The entries of a section name their members in one order: each entry is expected to
        // follow the one before (``EntryPayload/read(_:ordinal:members:order:into:)``).
        var order: [UInt8] = []
        repeat {
            if let meeting {
                parser.skipWhitespace()
                if parser.position == meeting { return false }
            }
            if entries.count & 1023 == 1023, isCancelled() { return nil }
            let key = try parser.memberName()
            guard parser.peek() == UInt8(ascii: "{") else { return nil }
            let ordinal = UInt64(entries.count + 1)
            var derived = false
            var hash = 0
            let kind = section.kind
            let written = try blocks.append(scratch: &members) { output, members in
                let start = output.count
                guard try EntryPayload.read(&parser, ordinal: ordinal, members: &members, order: &order, into: &output) else {
                    return false
                }
                key.withUTF8 { key in
                    hash = StringHash.hash(UnsafeRawBufferPointer(key))
                    derived = output.withBytes(from: start) { payload in
                        KeyText.derives(kind, payload: payload, key: UnsafeRawBufferPointer(key))
                    }
                }
                return true
            }
            guard let (block, range) = written else { return nil }
            entries.append((name: derived ? nil : key.string, hash: hash, kind: kind, block: block, range: range))
        } while try parser.endOfMember()
        return true
    }

    /// What this read of a second half leaves for the read of the first.
    private consuming func rest() -> Rest {
        Rest(sections: sections, entries: entries, blocks: blocks.finish())
    }

    /// Takes `rest`, read from an entry key of `open` on, as what follows this read's entries;
    /// `false` (with nothing taken) when a section it read repeats one of this read's.
    private mutating func follow(_ open: OpenSection, with rest: consuming Rest) -> Bool {
        let names = Set(sections.map(\.name) + [open.name])
        guard rest.sections.dropFirst().allSatisfy({ !names.contains($0.name) }) else { return false }
        // The rest's ordinals go on from this read's.
        let offset = entries.count
        for (index, entry) in rest.entries.enumerated() {
            rest.blocks[entry.block].withUnsafeMutableBytes { block in
                EntryPayload.setOrdinal(
                    UInt64(offset + index + 1), in: UnsafeMutableRawBufferPointer(rebasing: block[entry.range]))
            }
        }
        let firstBlock = blocks.append(rest.blocks)
        for (index, section) in rest.sections.enumerated() {
            switch section.content {
            case .entries(_, let range) where index == 0:
                sections.append((name: open.name, content: .entries(open.kind, open.first..<offset + range.upperBound)))
            case .entries(let kind, let range):
                sections.append(
                    (name: section.name, content: .entries(kind, offset + range.lowerBound..<offset + range.upperBound)))
            case .unknown:
                sections.append(section)
            }
        }
        entries.reserveCapacity(offset + rest.entries.count)
        for entry in rest.entries {
            entries.append(
                (name: entry.name, hash: entry.hash, kind: entry.kind, block: firstBlock + entry.block, range: entry.range))
        }
        return true
    }

    /// The records read.
    private consuming func records() -> MSALDocument.Records {
        let written = blocks.finish()
        return MSALDocument.Records(
            sections: sections,
            entries: entries.map {
                let payload = PayloadBytes(written[$0.block], $0.range)
                let name = $0.name.map(KeyText.init) ?? KeyText(derivedFrom: payload, kind: $0.kind)
                return Record(id: RecordID(kind: RecordCodec.recordKind($0.kind), nameText: name), bytes: payload)
            },
            keyHashes: entries.map(\.hash))
    }
}
