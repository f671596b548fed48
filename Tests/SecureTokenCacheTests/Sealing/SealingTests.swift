import Testing

@testable import SecureTokenCache

/// What the group key does besides sealing batches (``BatchSealingTests``): deriving a key from a
/// passphrase, and sealing the markers that authenticate commits and the key check.
@Suite(.timeLimit(.minutes(1))) struct SealingTests {
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
