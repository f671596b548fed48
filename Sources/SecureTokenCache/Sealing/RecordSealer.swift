import CSodium

/// Seals and opens the records of one group under the group's key.
///
/// Records are sealed in **batches** (``sealBatch(_:firstSequence:appendingTo:)``):
/// `firstSequence u64le ‖ count u32le ‖ box`, one XChaCha20-Poly1305 box for the whole batch, whose
/// plaintext is `count` records, each `op u8 ‖ kind u8 ‖ nameLength u32le ‖ name ‖ payloadLength
/// u32le ‖ payload` (a delete has op 2 and no payload). The associated data binds the format
/// version, the group name, the context `"STCB"`, `firstSequence` and `count`; the records in a
/// batch take the sequence numbers `firstSequence`, `firstSequence + 1`, …. One box per batch
/// rather than per record, because a box has a fixed cost (the HChaCha20 subkey and the Poly1305
/// setup) that would dominate opening a large group of small records. The box authenticates every
/// byte inside it, so a record cannot be moved to another group, kind or name, turned from a put
/// into a delete, or replayed at another position, without its batch failing to open.
///
/// The same key also seals markers (``sealMarker(context:associatedData:appendingTo:)``): empty
/// boxes that authenticate store-level structures such as commits and the key check.
final class RecordSealer: Sendable {
    /// The version of the sealed-record format, bound into every record's associated data.
    static let formatVersion: UInt16 = 1
    /// Bytes in front of a batch's box: first sequence, record count.
    static let batchPrefixByteCount = 8 + 4
    /// The plaintext bytes a record takes in a batch besides its name and payload (op, kind and
    /// the two lengths): also the least a record can take, which bounds a batch's count.
    static let batchRecordOverhead = 1 + 1 + 4 + 4
    /// Keeps batch boxes apart from markers and other structures sealed under the group key.
    private static let batchContext: StaticString = "STCB"

    private enum Operation: UInt8 {
        case put = 1
        case delete = 2
    }

    /// The group whose records this sealer handles (bound into every record).
    let groupName: String
    private let key: SecretKey
    /// `version u16le ‖ group name length u16le ‖ group name`: what every associated data binds
    /// after its context, computed once.
    private let groupBinding: [UInt8]
    /// A subkey of the group key for ``keyedName(of:)``, so that the names never use the sealing
    /// key itself.
    private let nameKey: SecretKey

    /// A sealer for `groupName` that takes ownership of `groupKey`.
    init(groupKey: consuming SecretKey, groupName: String) throws {
        self.groupName = groupName
        nameKey = try groupKey.withUnsafeBytes { key in
            try SecretKey { subkey in
                let status = crypto_kdf_derive_from_key(
                    subkey.baseAddress!.assumingMemoryBound(to: UInt8.self), subkey.count, 1, "STCNAMES",
                    key.baseAddress!.assumingMemoryBound(to: UInt8.self))
                guard status == 0 else {
                    throw TokenCacheError(
                        .cryptoFailure, "could not derive the group's name key",
                        underlying: .sodium(function: "crypto_kdf_derive_from_key", returnCode: status))
                }
            }
        }
        self.key = groupKey
        var binding: [UInt8] = []
        Self.appendLE(Self.formatVersion, to: &binding)
        let name = Array(groupName.utf8)
        Self.appendLE(UInt16(clamping: name.count), to: &binding)
        binding += name
        groupBinding = binding
    }

    /// The plaintext bytes `change` takes in a sealed batch (to split large transactions into
    /// batches of a bounded size before sealing).
    static func batchPlaintextByteCount(of change: RecordChange) -> Int {
        switch change {
        case .put(let record): batchRecordOverhead + record.id.nameText.utf8Count + record.payload.count
        case .delete(let id): batchRecordOverhead + id.nameText.utf8Count
        }
    }

    /// Seals `changes` (at least one) as one batch whose records take the sequence numbers
    /// `firstSequence`, `firstSequence + 1`, …, and appends the sealed batch
    /// (`firstSequence u64le ‖ count u32le ‖ box`) to `output`.
    ///
    /// Throws ``TokenCacheError/Code/invalidArgument`` for an empty batch, or a count, name or
    /// payload too large for the format's 32-bit lengths; ``TokenCacheError/Code/cryptoFailure``
    /// if libsodium fails. Nothing is appended then.
    func sealBatch(_ changes: some Collection<RecordChange>, firstSequence: UInt64, appendingTo output: inout [UInt8])
        throws
    {
        let count = changes.count
        guard count >= 1, count <= Int(UInt32.max), UInt64(count - 1) <= UInt64.max - firstSequence else {
            throw TokenCacheError(.invalidArgument, "a sealed batch holds 1 to 2³²-1 records (got \(count))")
        }
        var byteCount = 0
        for change in changes { byteCount += Self.batchPlaintextByteCount(of: change) }
        var plaintext: [UInt8] = []
        plaintext.reserveCapacity(byteCount)
        defer { Sodium.wipe(&plaintext) }
        for change in changes {
            let id = change.id
            try id.nameText.withUTF8 { name in
                guard name.count <= Int(UInt32.max) else {
                    throw TokenCacheError(.invalidArgument, "a record name is too long to seal (\(name.count) bytes)")
                }
                switch change {
                case .put(let record):
                    guard record.payload.count <= Int(UInt32.max) else {
                        throw TokenCacheError(.invalidArgument, "a record is too large to seal (\(record.payload.count) bytes)")
                    }
                    plaintext.append(Operation.put.rawValue)
                    plaintext.append(id.kind.rawValue)
                    Self.appendLE(UInt32(name.count), to: &plaintext)
                    plaintext.append(contentsOf: name)
                    Self.appendLE(UInt32(record.payload.count), to: &plaintext)
                    plaintext.append(contentsOf: record.payload)
                case .delete:
                    plaintext.append(Operation.delete.rawValue)
                    plaintext.append(id.kind.rawValue)
                    Self.appendLE(UInt32(name.count), to: &plaintext)
                    plaintext.append(contentsOf: name)
                    Self.appendLE(UInt32(0), to: &plaintext)
                }
            }
        }
        let start = output.count
        Self.appendLE(firstSequence, to: &output)
        Self.appendLE(UInt32(count), to: &output)
        let associatedData = contextAssociatedData(context: Self.batchContext, output[start...])
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

    /// The first sequence number and record count in a sealed batch's clear prefix, or `nil` if
    /// `sealed` is too short or the count is impossible for its size (0, or more records than
    /// the box can hold). Not authenticated until the batch is opened.
    static func batchHeader(_ sealed: UnsafeRawBufferPointer) -> (firstSequence: UInt64, count: Int)? {
        guard sealed.count >= batchPrefixByteCount + XChaCha20Poly1305.overhead else { return nil }
        let first = UInt64(littleEndian: sealed.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        let count = Int(UInt32(littleEndian: sealed.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
        let plaintextCount = sealed.count - batchPrefixByteCount - XChaCha20Poly1305.overhead
        guard count >= 1, count <= plaintextCount / batchRecordOverhead, UInt64(count - 1) <= UInt64.max - first else {
            return nil
        }
        return (first, count)
    }

    /// Opens a sealed batch (exactly the bytes ``sealBatch(_:firstSequence:appendingTo:)``
    /// appended). Throws ``TokenCacheError/Code/storeCorrupted`` if it is malformed or does not
    /// authenticate (damaged, tampered with, cut, or sealed under another key or group); never
    /// returns fewer records than were sealed.
    func openBatch(_ sealed: UnsafeRawBufferPointer) throws -> OpenedBatch {
        var buffers = OpeningBuffers()
        var changes: [RecordChange] = []
        var nameHashes: [UInt64] = []
        let firstSequence = try openBatch(sealed, buffers: &buffers, appendingTo: &changes, nameHashes: &nameHashes)
        return OpenedBatch(firstSequence: firstSequence, changes: changes)
    }

    /// ``openBatch(_:)`` for loops over many batches: opens with caller-provided scratch memory,
    /// appends the batch's changes to `changes` (in order: the change at position `i` has the
    /// sequence number `firstSequence + i`) and the ``RecordNameHash`` of each to `nameHashes`,
    /// and returns `firstSequence`. On error both are left as they were.
    func openBatch(
        _ sealed: UnsafeRawBufferPointer, buffers: inout OpeningBuffers, appendingTo changes: inout [RecordChange],
        nameHashes: inout [UInt64]
    ) throws -> UInt64 {
        var (firstSequence, count, plaintext) = try openBox(sealed, buffers: &buffers)
        let start = changes.count
        let hashesStart = nameHashes.count
        do {
            try Self.parseBatch(plaintext, count: count, into: &changes) { kind, name in
                nameHashes.append(RecordNameHash.hash(kind: kind, name: name))
            }
        } catch {
            changes.removeSubrange(start...)
            nameHashes.removeSubrange(hashesStart...)
            Sodium.wipe(&plaintext)
            throw error
        }
        return firstSequence
    }

    /// Opens one row of a ``RowStore``: a batch of one change, sealed as sequence number
    /// `version`, under the keyed name `name` (``keyedName(of:)``). Throws as ``openBatch(_:)``
    /// does; `nil` when the batch opens but is not that row's (moved or copied to another place).
    ///
    /// The name is checked on the bytes sealed: written out again from the record, a name its
    /// payload derives (``KeyText``) would be rebuilt from the payload for every row opened.
    func openRow(_ sealed: UnsafeRawBufferPointer, version: UInt64, name: [UInt8]) throws -> RecordChange? {
        var buffers = OpeningBuffers()
        var (firstSequence, count, plaintext) = try openBox(sealed, buffers: &buffers)
        var changes: [RecordChange] = []
        // What is not handed back is wiped, as a batch that fails to parse is; the change's
        // slices go first, or the wipe would write a copy.
        func discard() {
            changes = []
            Sodium.wipe(&plaintext)
        }
        guard firstSequence == version, count == 1 else {
            discard()
            return nil
        }
        var named = false
        do {
            try Self.parseBatch(plaintext, count: 1, into: &changes) { kind, sealedName in
                named = keyedName(kind: kind, name: sealedName, is: name)
            }
        } catch {
            discard()
            throw error
        }
        guard named else {
            discard()
            return nil
        }
        return changes[0]
    }

    /// Opens a sealed batch's box: its first sequence number, its record count and its plaintext,
    /// authenticated with its clear prefix.
    private func openBox(_ sealed: UnsafeRawBufferPointer, buffers: inout OpeningBuffers) throws
        -> (firstSequence: UInt64, count: Int, plaintext: [UInt8])
    {
        guard let (firstSequence, count) = Self.batchHeader(sealed) else {
            throw Self.damaged("a sealed batch is malformed")
        }
        buffers.associatedData.removeAll(keepingCapacity: true)
        appendContextAssociatedData(
            context: Self.batchContext, sealed[..<Self.batchPrefixByteCount], to: &buffers.associatedData)
        let box = UnsafeRawBufferPointer(rebasing: sealed[Self.batchPrefixByteCount...])
        // Opened into a buffer of its own, which the records' payloads then share as slices:
        // opening into the scratch buffer and copying it out would copy every byte once more.
        guard
            let plaintext = buffers.associatedData.withUnsafeBytes({
                XChaCha20Poly1305.open(box, using: key, authenticating: $0)
            })
        else {
            throw Self.damaged("a sealed batch failed to authenticate (damaged, tampered with, or sealed with another key)")
        }
        return (firstSequence, count, plaintext)
    }

    /// Parses exactly `count` records filling exactly `batch` (an opened batch), appending a
    /// change for each and handing each one's kind and name, as sealed, to `noteName`.
    private static func parseBatch(
        _ batch: [UInt8], count: Int, into changes: inout [RecordChange],
        noteName: (RecordKind, UnsafeRawBufferPointer) -> Void
    ) throws {
        // The records' payloads are slices of the batch, not a buffer each: fewer allocations to
        // make now and to free with the group.
        try batch.withUnsafeBytes { plaintext in
            try parseBatch(plaintext, of: batch, count: count, into: &changes, noteName: noteName)
        }
    }

    private static func parseBatch(
        _ plaintext: UnsafeRawBufferPointer, of batch: [UInt8], count: Int, into changes: inout [RecordChange],
        noteName: (RecordKind, UnsafeRawBufferPointer) -> Void
    ) throws {
        var offset = 0
        for _ in 0..<count {
            guard plaintext.count - offset >= batchRecordOverhead, let operation = Operation(rawValue: plaintext[offset])
            else { throw damaged("a sealed batch holds a malformed record") }
            // The batch authenticated, so a kind this version does not know was written so: by a
            // newer version that keeps something in a record of a new kind.
            guard let kind = RecordKind(rawValue: plaintext[offset + 1]) else {
                throw TokenCacheError(
                    .unsupportedFormat,
                    "the group holds a kind of record this version does not know (written by a newer SecureTokenCache): "
                        + "upgrade SecureTokenCache to read it")
            }
            let nameCount = Int(UInt32(littleEndian: plaintext.loadUnaligned(fromByteOffset: offset + 2, as: UInt32.self)))
            offset += 6
            // The payload length follows the name: 4 more bytes.
            guard nameCount <= plaintext.count - offset - 4 else { throw damaged("a sealed batch holds a record cut short") }
            let nameBytes = UnsafeRawBufferPointer(rebasing: plaintext[offset..<(offset + nameCount)])
            guard Self.isUTF8(nameBytes) else { throw damaged("a sealed batch holds a malformed record name") }
            offset += nameCount
            let payloadCount = Int(UInt32(littleEndian: plaintext.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            offset += 4
            guard payloadCount <= plaintext.count - offset else { throw damaged("a sealed batch holds a record cut short") }
            let range = offset..<(offset + payloadCount)
            switch operation {
            case .put:
                // An entry's name that its payload derives is held as the payload (``KeyText``).
                let payload = PayloadBytes(batch, range)
                let derivedFrom = RecordCodec.credentialKind(kind).flatMap { entryKind in
                    KeyText.derives(entryKind, payload: UnsafeRawBufferPointer(rebasing: plaintext[range]), key: nameBytes)
                        ? entryKind : nil
                }
                let id = RecordID(
                    kind: kind,
                    nameText: derivedFrom.map { KeyText(derivedFrom: payload, kind: $0) }
                        ?? KeyText(String(decoding: nameBytes, as: UTF8.self)))
                changes.append(.put(Record(id: id, bytes: payload)))
            case .delete:
                guard payloadCount == 0 else { throw damaged("a sealed delete carries a payload") }
                changes.append(.delete(RecordID(kind: kind, name: String(decoding: nameBytes, as: UTF8.self))))
            }
            noteName(kind, nameBytes)
            offset += payloadCount
        }
        guard offset == plaintext.count else { throw damaged("a sealed batch holds more than its records") }
    }

    /// Whether `bytes` are UTF-8: checked without making a string when they are ASCII, as every
    /// MSAL key is, since a name its payload derives is then held without one.
    private static func isUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.allSatisfy { $0 < 0x80 } || String.validUTF8(bytes.assumingMemoryBound(to: UInt8.self)) != nil
    }

    /// Reusable scratch memory for opening many batches in a row: the associated data, rebuilt
    /// for each batch in one buffer. It never holds plaintext (each batch opens into a buffer of
    /// its own, which its records share), so there is nothing to wipe.
    struct OpeningBuffers {
        fileprivate var associatedData: [UInt8] = []

        /// A fresh, empty set of buffers.
        init() {}
    }

    /// A name for record `id` that reveals nothing of it: a BLAKE2b-256 of its kind and name,
    /// keyed with a subkey of the group key, so the same record in two groups has unrelated
    /// names and nobody without the key can test a guess. Stores that keep one record per row
    /// (``RowStore``) key their rows by it.
    func keyedName(of id: RecordID) -> [UInt8] {
        id.nameText.withUTF8 { keyedDigest(id.kind.rawValue, $0, count: Self.keyedNameByteCount) }
    }

    /// Whether `expected` is the keyed name (``keyedName(of:)``) of the record of kind `kind` named
    /// `name`: worked out in scratch memory, since every row a reader opens is checked.
    private func keyedName(kind: RecordKind, name: UnsafeRawBufferPointer, is expected: [UInt8]) -> Bool {
        guard expected.count == Self.keyedNameByteCount else { return false }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.keyedNameByteCount) { digest in
            keyedDigest(kind.rawValue, name, into: digest)
            return expected.elementsEqual(digest)
        }
    }

    /// How long a record's keyed name is.
    private static let keyedNameByteCount = 32

    /// The keyed name of a partition (``CachePartition/storageKey``), under the same subkey as
    /// ``keyedName(of:)``: a first byte no record kind has keeps the two apart. Short: a
    /// database keeps one per row, and announcements name several.
    func keyedPartition(_ key: String) -> [UInt8] {
        var key = key
        return key.withUTF8 { keyedDigest(0xFF, UnsafeRawBufferPointer($0), count: 16) }
    }

    /// ``keyedDigest(_:_:into:)`` as a new array of `count` bytes.
    private func keyedDigest(_ first: UInt8, _ bytes: UnsafeRawBufferPointer, count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { digest, initialized in
            keyedDigest(first, bytes, into: digest)
            initialized = count
        }
    }

    /// The keyed BLAKE2b digest, under the name subkey, of `first` followed by `bytes`, as long as
    /// `digest`: every keyed name is one (a record's kind and name, or the partition mark and a
    /// partition's key), its message put together in scratch memory.
    private func keyedDigest(_ first: UInt8, _ bytes: UnsafeRawBufferPointer, into digest: UnsafeMutableBufferPointer<UInt8>) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1 + bytes.count) { message in
            message[0] = first
            if let source = bytes.baseAddress {
                UnsafeMutableRawPointer(message.baseAddress! + 1).copyMemory(from: source, byteCount: bytes.count)
            }
            let status = nameKey.withUnsafeBytes { key in
                crypto_generichash(
                    digest.baseAddress!, digest.count, message.baseAddress, UInt64(message.count),
                    key.baseAddress!.assumingMemoryBound(to: UInt8.self), key.count)
            }
            precondition(status == 0, "crypto_generichash failed with valid lengths")
        }
    }

    /// Seals an arbitrary store-level structure (a commit marker, a key check) under the group key:
    /// `context` (4 ASCII bytes) keeps these apart from record batches and from each other.
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
        contextAssociatedData(context: context, associatedData)
    }

    /// `context` (4 ASCII bytes), then the group binding, then `data`.
    private func contextAssociatedData(context: StaticString, _ data: some Collection<UInt8>) -> [UInt8] {
        var ad: [UInt8] = []
        ad.reserveCapacity(4 + groupBinding.count + data.count)
        appendContextAssociatedData(context: context, data, to: &ad)
        return ad
    }

    /// Appends ``contextAssociatedData(context:_:)`` to `output` (to reuse one buffer in loops).
    private func appendContextAssociatedData(context: StaticString, _ data: some Collection<UInt8>, to output: inout [UInt8]) {
        precondition(context.utf8CodeUnitCount == 4, "an associated-data context is 4 bytes")
        output.append(contentsOf: UnsafeBufferPointer(start: context.utf8Start, count: 4))
        output.append(contentsOf: groupBinding)
        output.append(contentsOf: data)
    }

    private static func damaged(_ message: String) -> TokenCacheError {
        TokenCacheError(.storeCorrupted, message)
    }

    /// Appends `value` in little-endian byte order.
    static func appendLE<T: FixedWidthInteger>(_ value: T, to output: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { output.append(contentsOf: $0) }
    }
}
