import Testing

@testable import SecureTokenCache

@Suite(.timeLimit(.minutes(1))) struct SealingTests {
    let record = Record(
        id: RecordID(kind: .accessToken, name: "uid.utid-login.microsoftonline.com-accesstoken-client-tenant-user.read"),
        payload: Array(#"{"secret":"eyJ0eXAi.token.value"}"#.utf8)
    )

    private func sealed(_ sealer: RecordSealer, _ change: RecordChange, sequence: UInt64 = 7) throws -> [UInt8] {
        var out: [UInt8] = []
        try sealer.seal(change, sequence: sequence, appendingTo: &out)
        return out
    }

    @Test func roundTrip() throws {
        let sealer = try RecordSealer(groupKey: SecretKey(), groupName: "group")
        let bytes = try sealed(sealer, .put(record))
        let opened = try bytes.withUnsafeBytes { try sealer.open($0) }
        guard case .put(let back) = opened.change else { Issue.record("expected a put"); return }
        #expect(back.id == record.id)
        #expect(back.payload == record.payload)
        #expect(opened.sequence == 7)
        #expect(opened.nameTag == sealer.nameTag(of: record.id.name))

        let delete = try sealed(sealer, .delete(record.id), sequence: 8)
        let openedDelete = try delete.withUnsafeBytes { try sealer.open($0) }
        guard case .delete(let id) = openedDelete.change else { Issue.record("expected a delete"); return }
        #expect(id == record.id)
    }

    @Test func sealedBytesHoldNoPlaintext() throws {
        let sealer = try RecordSealer(groupKey: SecretKey(), groupName: "group")
        let bytes = try sealed(sealer, .put(record))
        for needle in ["secret", "eyJ0eXAi", "accesstoken", "user.read", "client"] {
            #expect(!contains(bytes, Array(needle.utf8)))
        }
    }

    @Test func everyFlippedByteIsDetected() throws {
        let sealer = try RecordSealer(groupKey: SecretKey(), groupName: "group")
        let bytes = try sealed(sealer, .put(record))
        for index in bytes.indices {
            var damaged = bytes
            damaged[index] ^= 0x01
            let error = #expect(throws: TokenCacheError.self) { try damaged.withUnsafeBytes { try sealer.open($0) } }
            #expect(error?.code == .storeCorrupted)
        }
        for length in 0..<bytes.count {
            #expect(throws: TokenCacheError.self) { try bytes[..<length].withUnsafeBytes { try sealer.open($0) } }
        }
    }

    @Test func wrongKeyOrGroupIsDetected() throws {
        let sealer = try RecordSealer(groupKey: SecretKey(), groupName: "group")
        let bytes = try sealed(sealer, .put(record))
        let otherKey = try RecordSealer(groupKey: SecretKey(), groupName: "group")
        #expect(throws: TokenCacheError.self) { try bytes.withUnsafeBytes { try otherKey.open($0) } }

        let key = try SecretKey()
        let a = try key.withUnsafeBytes { try RecordSealer(groupKey: SecretKey(copying: $0), groupName: "a") }
        let b = try key.withUnsafeBytes { try RecordSealer(groupKey: SecretKey(copying: $0), groupName: "b") }
        let sameKey = try key.withUnsafeBytes { try RecordSealer(groupKey: SecretKey(copying: $0), groupName: "a") }
        let fromA = try sealed(a, .put(record))
        #expect(throws: TokenCacheError.self) { try fromA.withUnsafeBytes { try b.open($0) } }
        #expect(try fromA.withUnsafeBytes { try sameKey.open($0) }.sequence == 7)
    }

    @Test func associatedDataBindsKindNameAndSequence() throws {
        let sealer = try RecordSealer(groupKey: SecretKey(), groupName: "group")
        let bytes = try sealed(sealer, .put(record), sequence: 41)
        // Rewrite the clear prefix (kind, sequence, op) as an attacker would: the box no longer opens.
        var otherKind = bytes
        otherKind[1] = RecordKind.refreshToken.rawValue
        var otherSequence = bytes
        otherSequence[2 + NameTag.byteCount] = 42
        var otherOperation = bytes
        otherOperation[0] = 2
        var otherName = bytes
        var tag: [UInt8] = []
        sealer.nameTag(of: "someone-else").append(to: &tag)
        otherName.replaceSubrange(2..<(2 + NameTag.byteCount), with: tag)
        for damaged in [otherKind, otherSequence, otherOperation, otherName] {
            #expect(throws: TokenCacheError.self) { try damaged.withUnsafeBytes { try sealer.open($0) } }
        }
    }

    @Test func passphraseDerivationIsDeterministicPerSaltAndPassphrase() throws {
        let salt = try Sodium.randomBytes(Argon2idParameters.saltByteCount)
        let a = try SecretKey(passphrase: "correct horse", salt: salt, parameters: .minimum)
        let b = try SecretKey(passphrase: "correct horse", salt: salt, parameters: .minimum)
        let c = try SecretKey(passphrase: "wrong horse", salt: salt, parameters: .minimum)
        let d = try SecretKey(passphrase: "correct horse", salt: Sodium.randomBytes(16), parameters: .minimum)
        let bytes = { (key: borrowing SecretKey) in key.withUnsafeBytes { Array($0) } }
        #expect(bytes(a) == bytes(b))
        #expect(bytes(a) != bytes(c))
        #expect(bytes(a) != bytes(d))
        #expect(throws: TokenCacheError.self) { _ = try SecretKey(passphrase: "", salt: salt, parameters: .minimum) }
        #expect(throws: TokenCacheError.self) { _ = try SecretKey(passphrase: "x", salt: [1, 2], parameters: .minimum) }
    }

    @Test func markersAuthenticateContextAndData() throws {
        let sealer = try RecordSealer(groupKey: SecretKey(), groupName: "group")
        var box: [UInt8] = []
        try sealer.sealMarker(context: "KCHK", associatedData: [1, 2, 3], appendingTo: &box)
        #expect(box.withUnsafeBytes { sealer.openMarker($0, context: "KCHK", associatedData: [1, 2, 3]) })
        #expect(!box.withUnsafeBytes { sealer.openMarker($0, context: "KCHK", associatedData: [1, 2, 4]) })
        #expect(!box.withUnsafeBytes { sealer.openMarker($0, context: "CMIT", associatedData: [1, 2, 3]) })
    }
}

/// Whether `haystack` contains `needle` as a contiguous run of bytes.
func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return false }
    let first = needle[0]
    var index = 0
    while index <= haystack.count - needle.count {
        if haystack[index] == first, haystack[index..<(index + needle.count)].elementsEqual(needle) { return true }
        index += 1
    }
    return false
}
