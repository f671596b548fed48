import Glibc

/// A file-stored group's header: what the group is and how to find and check its key.
///
/// Layout (132 bytes, little-endian): `"STCGROUP"` ‖ format version u16 ‖ key source u8 ‖ 0 u8 ‖
/// group id (16) ‖ salt (16) ‖ Argon2id ops u64 ‖ Argon2id memory u64 ‖ key check (40) ‖
/// BLAKE2b-256 of everything before. The checksum tells a damaged header
/// (``TokenCacheError/Code/storeCorrupted``) from a wrong key: the key check is an empty box sealed
/// under the group key, which only the right key opens (``TokenCacheError/Code/wrongKey``).
/// Nothing in it is secret: the salt and limits are public by design.
struct GroupHeader: Sendable, Equatable {
    /// The newest format this code reads and writes.
    static let currentFormatVersion: UInt16 = 1
    /// The encoded size.
    static let byteCount = 132
    private static let magic = Array("STCGROUP".utf8)
    private static let keyCheckContext: StaticString = "KCHK"

    /// The format the group was written in.
    var formatVersion: UInt16
    /// 16 random bytes naming this group instance (bound into the log and the key check).
    var groupID: [UInt8]
    /// How the key is found again.
    var keySource: HeaderKeySource
    /// The sealed key check.
    var keyCheck: [UInt8]

    /// A header for a new group, with its key check sealed by `sealer`.
    init(groupID: [UInt8], keySource: HeaderKeySource, sealer: RecordSealer) throws {
        formatVersion = Self.currentFormatVersion
        self.groupID = groupID
        self.keySource = keySource
        var check: [UInt8] = []
        try sealer.sealMarker(context: Self.keyCheckContext, associatedData: groupID, appendingTo: &check)
        keyCheck = check
    }

    /// Whether `sealer` holds this group's key.
    func keyMatches(_ sealer: RecordSealer) -> Bool {
        keyCheck.withUnsafeBytes { sealer.openMarker($0, context: Self.keyCheckContext, associatedData: groupID) }
    }

    /// Throws ``TokenCacheError/Code/wrongKey`` unless `sealer` holds the key of this group,
    /// named `groupName`.
    func requireKey(_ sealer: RecordSealer, groupName: String) throws {
        guard keyMatches(sealer) else {
            throw TokenCacheError(
                .wrongKey,
                "the \(keySource.protectionLevel == .passphrase ? "passphrase" : "key") does not open the group \(groupName)")
        }
    }

    /// Reads the header of the group in `directory` (read only, its access time left alone).
    ///
    /// - Parameter damaged: what to make of a damaged header's error before it is thrown (the
    ///   store quarantines the file; a read-only check leaves it as it is).
    /// - Throws: ``TokenCacheError/Code/storeCorrupted`` for a missing header (not passed to
    ///   `damaged`: there is nothing to copy) or a damaged one, ``TokenCacheError/Code/unsupportedFormat``,
    ///   and the errors of ``GroupDirectory/openFile(_:_:_:)``.
    static func read(
        in directory: GroupDirectory, damaged: (TokenCacheError) -> TokenCacheError = { $0 }
    ) throws -> GroupHeader {
        let fd: Int32
        do {
            fd = try directory.openFile("header", O_RDONLY, "opening the group header")
        } catch let error as TokenCacheError where error.underlying == .posix(call: "open", errno: ENOENT) {
            throw TokenCacheError(
                .storeCorrupted, "the group directory \(directory.path) has no header; it is not a usable group")
        }
        defer { SystemCall.close(fd) }
        do {
            return try GroupHeader(decoding: SystemCall.readAll(fd, "reading the group header"))
        } catch let error as TokenCacheError where error.code == .storeCorrupted {
            throw damaged(error)
        }
    }

    /// The header's bytes.
    func encoded() -> [UInt8] {
        var out = Self.magic
        RecordSealer.appendLE(formatVersion, to: &out)
        var salt = [UInt8](repeating: 0, count: 16)
        var parameters = Argon2idParameters(opsLimit: 0, memLimit: 0)
        switch keySource {
        case .passphrase(let s, let p):
            out.append(1)
            salt = s
            parameters = p
        case .keyFile: out.append(2)
        case .keyring: out.append(3)
        }
        out.append(0)
        out += groupID
        out += salt
        RecordSealer.appendLE(parameters.opsLimit, to: &out)
        RecordSealer.appendLE(parameters.memLimit, to: &out)
        out += keyCheck
        out += out.withUnsafeBytes { Sodium.checksum($0) }
        return out
    }

    /// Decodes a header. Throws ``TokenCacheError/Code/storeCorrupted`` if it is damaged and
    /// ``TokenCacheError/Code/unsupportedFormat`` if a newer version of this library wrote it.
    init(decoding bytes: [UInt8]) throws {
        guard bytes.count == Self.byteCount,
            bytes[..<(Self.byteCount - 32)].withUnsafeBytes({ Sodium.checksum($0) }) == Array(bytes[(Self.byteCount - 32)...]),
            bytes[..<8].elementsEqual(Self.magic)
        else { throw TokenCacheError(.storeCorrupted, "the group header is damaged (checksum mismatch)") }
        let read = { (offset: Int) -> UInt64 in
            bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
        }
        formatVersion = UInt16(bytes[8]) | UInt16(bytes[9]) << 8
        guard formatVersion <= Self.currentFormatVersion, formatVersion > 0 else {
            throw TokenCacheError(
                .unsupportedFormat,
                "the group was written in format \(formatVersion) by a newer version of this library; upgrade to open it"
            )
        }
        groupID = Array(bytes[12..<28])
        switch bytes[10] {
        case 1:
            let parameters = Argon2idParameters(opsLimit: read(44), memLimit: read(52))
            do { try parameters.validate() } catch {
                throw TokenCacheError(.storeCorrupted, "the group header has impossible Argon2id limits")
            }
            keySource = .passphrase(salt: Array(bytes[28..<44]), parameters: parameters)
        case 2: keySource = .keyFile
        case 3: keySource = .keyring
        default: throw TokenCacheError(.storeCorrupted, "the group header names an unknown key source")
        }
        keyCheck = Array(bytes[60..<100])
    }
}
