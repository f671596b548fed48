import Synchronization

/// ``KeyringSnapshot/open(_:with:)``, the reader of a keyring group's records item.
///
/// The input's first byte picks what it is: ``FuzzEdits`` on a snapshot sealed with the known
/// key (`prepare` makes it), raw bytes for the item, or records (a kind byte, a name length
/// byte, a payload length u16le, then the name and payload, repeated) to seal and open again.
///
/// Property: a damaged or foreign item throws `.storeCorrupted` (`.unsupportedFormat` for
/// another format number) or opens to exactly the snapshot sealed, never to fewer records; and
/// records sealed open back unchanged.
enum KeyringSnapshotTarget {
    private struct Template {
        var sealer: RecordSealer
        var snapshot: KeyringSnapshot
        var sealed: [UInt8]
    }

    private static let template = Mutex<Template?>(nil)

    static func prepare() {
        let sealer = FuzzKey.sealer()
        var snapshot = KeyringSnapshot(sequence: 7, records: [:], writer: Array(1...16))
        snapshot.apply([
            .put(Record(id: RecordID(kind: .accessToken, name: "at-1"), payload: Array("token one".utf8))),
            .put(Record(id: RecordID(kind: .refreshToken, name: "rt-1"), payload: Array("refresh one".utf8))),
            .put(Record(id: RecordID(kind: .account, name: "acct"), payload: [])),
        ])
        do {
            let sealed = try snapshot.sealed(with: sealer)
            template.withLock { $0 = Template(sealer: sealer, snapshot: snapshot, sealed: sealed) }
        } catch {
            fatalError("cannot seal the keyring snapshot template: \(error)")
        }
    }

    static func check(_ input: [UInt8]) {
        guard let template = template.withLock({ $0 }), let mode = input.first else { return }
        let rest = input.dropFirst()
        switch mode % 3 {
        case 0:
            let damaged = FuzzEdits(rest, to: [template.sealed]).files[0]
            requireOriginalOrError(damaged, template.snapshot, template.sealer)
        case 1:
            requireOriginalOrError(Array(rest), template.snapshot, template.sealer)
        default:
            var snapshot = KeyringSnapshot(sequence: UInt64(rest.count), records: [:])
            snapshot.apply(records(rest))
            let sealed: [UInt8]
            do {
                sealed = try snapshot.sealed(with: template.sealer)
            } catch {
                FuzzProperty.requireTyped(error, [.invalidArgument], "sealing a snapshot")
                return
            }
            requireOriginalOrError(sealed, snapshot, template.sealer, mustOpen: true)
        }
    }

    /// Records read from `bytes`, as the type's doc describes.
    static func records(_ bytes: ArraySlice<UInt8>) -> [RecordChange] {
        var rest = bytes
        var changes: [RecordChange] = []
        while rest.count >= 4 {
            let kind = RecordKind.allCases[Int(rest[rest.startIndex]) % RecordKind.allCases.count]
            let nameCount = Int(rest[rest.startIndex + 1])
            let payloadCount = Int(rest[rest.startIndex + 2]) | Int(rest[rest.startIndex + 3]) << 8
            rest = rest.dropFirst(4)
            let name = String(decoding: rest.prefix(nameCount), as: UTF8.self)
            rest = rest.dropFirst(nameCount)
            let payload = Array(rest.prefix(payloadCount))
            rest = rest.dropFirst(payloadCount)
            changes.append(.put(Record(id: RecordID(kind: kind, name: name), payload: payload)))
        }
        return changes
    }

    private static func requireOriginalOrError(
        _ bytes: [UInt8], _ original: KeyringSnapshot, _ sealer: RecordSealer, mustOpen: Bool = false
    ) {
        let opened: KeyringSnapshot
        do {
            opened = try bytes.withUnsafeBytes { try KeyringSnapshot.open($0, with: sealer) }
        } catch {
            FuzzProperty.requireTyped(error, [.storeCorrupted, .unsupportedFormat], "opening a snapshot")
            FuzzProperty.require(!mustOpen, "a snapshot just sealed does not open: \(error)")
            return
        }
        FuzzProperty.require(
            opened.sequence == original.sequence && opened.writer == original.writer
                && FileStoreTarget.records(Array(opened.records.values))
                    == FileStoreTarget.records(Array(original.records.values))
                && opened.records.allSatisfy { $0.key == $0.value.id },
            "a snapshot opened to something other than what was sealed")
    }
}
