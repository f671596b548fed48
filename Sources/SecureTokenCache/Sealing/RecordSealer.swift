import CSodium

/// Seals and opens the records of one group under the group's key.
///
/// A sealed record (the unit every store persists) is
/// `op u8 ‖ kind u8 ‖ nameTag 16 ‖ sequence u64le ‖ box`, where `box` is XChaCha20-Poly1305 of
/// `nameLength u32le ‖ name ‖ payload`. The associated data binds the format version, the group
/// name, the operation, the record kind, the record name (through its keyed tag; the name itself
/// is inside the box, and the tag is checked against it after opening) and the sequence number,
/// so a record cannot be moved to another group, kind or name, turned from a put into a delete,
/// or replayed at another position, without failing to open.
final class RecordSealer: Sendable {
    /// The version of the sealed-record format, bound into every record's associated data.
    static let formatVersion: UInt16 = 1
    /// Bytes in front of the box: op, kind, name tag, sequence.
    static let prefixByteCount = 2 + NameTag.byteCount + 8

    private enum Operation: UInt8 {
        case put = 1
        case delete = 2
    }

    /// The group whose records this sealer handles (bound into every record).
    let groupName: String
    private let key: SecretKey
    private let nameKey: SecretKey
    /// `"STCR" ‖ version u16le ‖ group name length u16le ‖ group name`: the associated data's
    /// constant prefix, computed once.
    private let associatedDataPrefix: [UInt8]

    /// A sealer for `groupName` that takes ownership of `groupKey`.
    init(groupKey: consuming SecretKey, groupName: String) throws {
        self.groupName = groupName
        self.nameKey = try groupKey.derivedSubkey(id: 1, context: "STCname_")
        self.key = groupKey
        var prefix = Array("STCR".utf8)
        Self.appendLE(Self.formatVersion, to: &prefix)
        let name = Array(groupName.utf8)
        Self.appendLE(UInt16(clamping: name.count), to: &prefix)
        prefix += name
        associatedDataPrefix = prefix
    }

    /// The keyed tag of a record name.
    func nameTag(of name: String) -> NameTag {
        var name = name
        return name.withUTF8 { utf8 in
            var out = (UInt64(0), UInt64(0))
            withUnsafeMutableBytes(of: &out) { out in
                nameKey.withUnsafeBytes { key in
                    _ = crypto_generichash(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), NameTag.byteCount,
                        utf8.baseAddress, UInt64(utf8.count),
                        key.baseAddress!.assumingMemoryBound(to: UInt8.self), key.count
                    )
                }
            }
            return withUnsafeBytes(of: &out) { NameTag($0) }
        }
    }

    /// Seals `change` with `sequence` and appends the sealed record to `output`.
    func seal(_ change: RecordChange, sequence: UInt64, appendingTo output: inout [UInt8]) throws {
        let id = change.id
        let operation: Operation
        var plaintext: [UInt8] = []
        let name = Array(id.name.utf8)
        Self.appendLE(UInt32(name.count), to: &plaintext)
        plaintext += name
        switch change {
        case .put(let record):
            operation = .put
            plaintext += record.payload
        case .delete:
            operation = .delete
        }
        defer { Sodium.wipe(&plaintext) }
        let tag = nameTag(of: id.name)
        let start = output.count
        output.append(operation.rawValue)
        output.append(id.kind.rawValue)
        tag.append(to: &output)
        Self.appendLE(sequence, to: &output)
        let associatedData = self.associatedData(output[start...])
        do {
            try plaintext.withUnsafeBytes { plain in
                try associatedData.withUnsafeBytes { ad in
                    try XChaCha20Poly1305.seal(plain, using: key, authenticating: ad, appendingTo: &output)
                }
            }
        } catch {
            output.removeSubrange(start...)
            throw error
        }
    }

    /// Reusable scratch memory for opening many records in a row. Holds plaintext between calls:
    /// call ``wipe()`` when done.
    struct OpeningBuffers {
        fileprivate var plaintext: [UInt8] = []
        fileprivate var associatedData: [UInt8] = []

        /// A fresh, empty set of buffers.
        init() {}

        /// Zeroes the plaintext buffer.
        mutating func wipe() { Sodium.wipe(&plaintext) }
    }

    /// Opens one sealed record (exactly the bytes ``seal(_:sequence:appendingTo:)`` appended).
    /// Throws ``TokenCacheError/Code/storeCorrupted`` if it is malformed or does not authenticate
    /// (damaged, tampered with, swapped, or sealed under another key or group).
    func open(_ sealed: UnsafeRawBufferPointer) throws -> OpenedRecord {
        var buffers = OpeningBuffers()
        defer { buffers.wipe() }
        return try open(sealed, buffers: &buffers)
    }

    /// ``open(_:)`` with caller-provided scratch memory, for loops over many records.
    func open(_ sealed: UnsafeRawBufferPointer, buffers: inout OpeningBuffers) throws -> OpenedRecord {
        guard sealed.count >= Self.prefixByteCount + XChaCha20Poly1305.overhead,
            let operation = Operation(rawValue: sealed[0]),
            let kind = RecordKind(rawValue: sealed[1])
        else { throw Self.damaged("a sealed record is malformed") }
        let tag = NameTag(UnsafeRawBufferPointer(rebasing: sealed[2..<(2 + NameTag.byteCount)]))
        let sequence = UInt64(
            littleEndian: sealed.loadUnaligned(fromByteOffset: 2 + NameTag.byteCount, as: UInt64.self))
        buffers.associatedData.removeAll(keepingCapacity: true)
        buffers.associatedData += associatedDataPrefix
        buffers.associatedData += sealed[..<Self.prefixByteCount]
        let box = UnsafeRawBufferPointer(rebasing: sealed[Self.prefixByteCount...])
        guard
            let count = buffers.associatedData.withUnsafeBytes({
                XChaCha20Poly1305.open(box, using: key, authenticating: $0, into: &buffers.plaintext)
            })
        else {
            throw Self.damaged("a sealed record failed to authenticate (damaged, tampered with, or sealed with another key)")
        }
        guard count >= 4 else { throw Self.damaged("a sealed record's contents are malformed") }
        return try buffers.plaintext.withUnsafeBytes { plaintext in
            let nameCount = Int(UInt32(littleEndian: plaintext.loadUnaligned(as: UInt32.self)))
            guard nameCount <= count - 4,
                let name = String.validUTF8(
                    UnsafeRawBufferPointer(rebasing: plaintext[4..<(4 + nameCount)]).assumingMemoryBound(to: UInt8.self)),
                nameTag(of: name) == tag
            else { throw Self.damaged("a sealed record's name does not match its tag") }
            let id = RecordID(kind: kind, name: name)
            let change: RecordChange
            switch operation {
            case .put: change = .put(Record(id: id, payload: Array(plaintext[(4 + nameCount)..<count])))
            case .delete:
                guard count == 4 + nameCount else { throw Self.damaged("a sealed delete carries a payload") }
                change = .delete(id)
            }
            return OpenedRecord(change: change, sequence: sequence, nameTag: tag)
        }
    }

    /// Seals an arbitrary store-level structure (a commit marker, a key check) under the group key:
    /// `context` (4 ASCII bytes) keeps these apart from records and from each other.
    func sealMarker(context: StaticString, associatedData: [UInt8], appendingTo output: inout [UInt8]) throws {
        let ad = markerAssociatedData(context: context, associatedData)
        try ad.withUnsafeBytes { ad in
            try XChaCha20Poly1305.seal(
                UnsafeRawBufferPointer(start: nil, count: 0), using: key, authenticating: ad, appendingTo: &output)
        }
    }

    /// Whether `box` is a marker sealed by ``sealMarker(context:associatedData:appendingTo:)``
    /// with the same context and associated data under this group key.
    func openMarker(_ box: UnsafeRawBufferPointer, context: StaticString, associatedData: [UInt8]) -> Bool {
        let ad = markerAssociatedData(context: context, associatedData)
        return ad.withUnsafeBytes { XChaCha20Poly1305.open(box, using: key, authenticating: $0) } == []
    }

    private func markerAssociatedData(context: StaticString, _ associatedData: [UInt8]) -> [UInt8] {
        var ad = associatedDataPrefix
        ad.replaceSubrange(0..<4, with: UnsafeBufferPointer(start: context.utf8Start, count: 4))
        return ad + associatedData
    }

    private func associatedData(_ recordPrefix: some Collection<UInt8>) -> [UInt8] {
        var ad = associatedDataPrefix
        ad.reserveCapacity(ad.count + Self.prefixByteCount)
        ad += recordPrefix
        return ad
    }

    private static func damaged(_ message: String) -> TokenCacheError {
        TokenCacheError(.storeCorrupted, message)
    }

    /// Appends `value` in little-endian byte order.
    static func appendLE<T: FixedWidthInteger>(_ value: T, to output: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { output.append(contentsOf: $0) }
    }
}
