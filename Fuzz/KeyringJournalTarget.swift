import Glibc
import Synchronization

/// The reader of a keyring group's change journal: ``KeyringJournal/changes(in:after:hint:through:)``
/// on the journal file.
///
/// `prepare` writes a journal with the known key: a few generations, starting after a non-zero
/// base. An input's first byte is kept for the corpus's format; the rest says what ``FuzzEdits``
/// damage in the journal file.
///
/// Property, as ``KeyringJournal`` documents it: a reader answers `nil` (the caller then reads
/// the records item) or exactly the changes that made the generations asked for, and the
/// position where the last of them ends; never other changes, never fewer.
enum KeyringJournalTarget {
    private struct Template {
        var journal: KeyringJournal
        var bytes: [UInt8]
        /// The generation the journal starts after.
        var base: UInt64
        /// Each generation's changes (the first entry made `base + 1`), as text.
        var changes: [[String]]
        /// Where each generation's commit ends, from `base` on.
        var positions: [UInt64]
    }

    private static let template = Mutex<Template?>(nil)

    private static func put(_ kind: RecordKind, _ name: String, _ payload: String) -> RecordChange {
        .put(Record(id: RecordID(kind: kind, name: name), payload: Array(payload.utf8)))
    }

    static func prepare() {
        let generations: [[RecordChange]] = [
            [put(.accessToken, "at-1", "token one"), put(.refreshToken, "rt-1", "refresh one")],
            [put(.accessToken, "at-1", "token one, renewed"), .delete(RecordID(kind: .refreshToken, name: "rt-1"))],
            [put(.account, "acct", "account")],
            [put(.idToken, "id-1", String(repeating: "a long id token ", count: 64)), put(.layout, "layout", "")],
        ]
        let base: UInt64 = 4
        do {
            let directory = try GroupDirectory.keyring(root: FuzzScratch.folder("keyring-journal"), name: "fuzz")
            guard mkdir(directory.path, 0o700) == 0 else { fatalError("cannot make the journal folder") }
            let journal = KeyringJournal(directory: directory, sealer: FuzzKey.sealer())
            var positions = [UInt64(KeyringJournal.headerByteCount)]
            for (offset, changes) in generations.enumerated() {
                let generation = base + UInt64(offset) + 1
                let file = journal.openForWriting()
                let end = file.flatMap { journal.appendPosition(in: $0, after: generation - 1) }
                guard let pending = try journal.begin(changes, generation: generation, appendingTo: file, at: end),
                    let committed = journal.commit(pending)
                else { fatalError("cannot write the journal template") }
                positions.append(committed.end)
            }
            let bytes = FuzzScratch.read(journal.path)
            template.withLock {
                $0 = Template(
                    journal: journal, bytes: bytes, base: base, changes: generations.map(FuzzKey.describe),
                    positions: positions)
            }
        } catch {
            fatalError("cannot build the journal template: \(error)")
        }
    }

    static func check(_ input: [UInt8]) {
        guard let template = template.withLock({ $0 }), !input.isEmpty else { return }
        let count = template.changes.count
        let damaged = FuzzEdits(input.dropFirst(), to: [template.bytes]).files[0]
        FuzzScratch.write(damaged, to: template.journal.path)
        guard let file = template.journal.openFile(writable: false) else { return }
        for after in 0..<count {
            for through in (after + 1)...count {
                for hint in [template.positions[after], 0] {
                    let found = template.journal.changes(
                        in: file, after: template.base + UInt64(after), hint: hint, through: template.base + UInt64(through))
                    requireTruth(found, template, after: after, through: through)
                }
            }
        }
    }

    /// `found` is `nil` or exactly the changes of the generations after `after` through
    /// `through` (counted from the journal's base) and where they end.
    private static func requireTruth(
        _ found: (changes: [RecordChange], position: UInt64)?, _ template: Template, after: Int, through: Int
    ) {
        guard let found else { return }
        FuzzProperty.require(
            FuzzKey.describe(found.changes) == Array(template.changes[after..<through].joined()),
            "the journal gave other changes for generations \(after + 1) to \(through)")
        FuzzProperty.require(
            found.position == template.positions[through], "the journal gave another position for generation \(through)")
    }
}
