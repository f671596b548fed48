import Foundation
import TestSupport
import Testing

@testable import SecureTokenCache

/// Bad input at scale: a damaged 100 MB MSAL document is refused with the byte offset of the
/// damage, and the group it was imported into keeps what it held, on disk as in memory.
@Suite(.serialized, .tags(.slow), .timeLimit(.minutes(5))) struct LargeDocumentTests {
    /// How many bytes of access tokens the document holds at least: 100 MB, or 10 MB in a
    /// sanitizer's pass (scripts/sanitize sets `STC_SANITIZER`). There an instrumented import of
    /// 100 MB is minutes of a pass that runs one test at a time, and what the sanitizer checks,
    /// the memory the reads touch, is the same code at either size (10 MB is still read in two
    /// halves at once).
    static let size = Sanitizer.isActive ? 10 << 20 : 100 << 20

    /// Over ``size`` bytes of MSAL JSON in msal-python's layout: users with four access tokens and
    /// an account each.
    static let document: [UInt8] = {
        let tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"
        let client = "11111111-aaaa-4bbb-8ccc-000000000001"
        var tokens: [UInt8] = []
        var accounts: [UInt8] = []
        tokens.reserveCapacity(size + size / 10)
        var user = 0
        while tokens.count < size {
            let digits = String(user)
            let home = "00000000-0000-0000-0000-\(String(repeating: "0", count: 12 - digits.count) + digits).\(tenant)"
            for scope in 0..<4 {
                if !tokens.isEmpty { tokens += Array(", ".utf8) }
                let target = "Scope\(scope).Read openid profile"
                tokens += Array(
                    #""\#(home)-login.microsoftonline.com-accesstoken-\#(client)-\#(tenant)-\#(target.lowercased())": {"credential_type": "AccessToken", "secret": "at-\#(user)-\#(scope)-\#(String(repeating: "x", count: 400))", "home_account_id": "\#(home)", "environment": "login.microsoftonline.com", "client_id": "\#(client)", "target": "\#(target)", "realm": "\#(tenant)", "token_type": "Bearer", "cached_at": "1700000000", "expires_on": "4000000000", "extended_expires_on": "4000000000"}"#
                        .utf8)
            }
            if !accounts.isEmpty { accounts += Array(", ".utf8) }
            accounts += Array(
                #""\#(home)-login.microsoftonline.com-\#(tenant)": {"home_account_id": "\#(home)", "environment": "login.microsoftonline.com", "realm": "\#(tenant)", "local_account_id": "\#(user)", "username": "user\#(user)@contoso.com", "authority_type": "MSSTS"}"#
                    .utf8)
            user += 1
        }
        return Array(#"{"AccessToken": {"#.utf8) + tokens + Array(#"}, "Account": {"#.utf8) + accounts + Array("}}".utf8)
    }()

    /// A file group holding a small cache, and what it exports.
    func group(in folder: TemporaryDirectory) throws -> (CacheGroup, [UInt8]) {
        let group = try CacheGroup.open("large", configuration: configuration(folder))
        try group.importMSAL(try Fixtures.vector("v2_two_accounts_two_tenants"))
        return (group, try group.exportMSAL(includeSecrets: true))
    }

    func configuration(_ folder: TemporaryDirectory) -> CacheConfiguration {
        CacheConfiguration(store: .file, directory: folder.path, keySource: .keyFile(path: folder.path + "/key"))
    }

    /// The byte offset an error message names ("... at byte N ...").
    func offset(in message: String) -> Int? {
        guard let range = message.range(of: "at byte ") else { return nil }
        return Int(message[range.upperBound...].prefix { $0.isNumber })
    }

    /// Imports `bytes` into a group holding a small cache: a `.malformedCache` error, and the
    /// group as it was, in this process and for a process that opens it afresh.
    func refused(_ bytes: [UInt8]) throws -> TokenCacheError? {
        let folder = TemporaryDirectory()
        let (group, before) = try group(in: folder)
        let generation = group.generation
        let thrown = #expect(throws: TokenCacheError.self) { try group.importMSAL(bytes) }
        #expect(thrown?.code == .malformedCache)
        #expect(group.generation == generation)
        #expect(try group.exportMSAL(includeSecrets: true) == before)
        #expect(try CacheGroup.open("large", configuration: configuration(folder)).exportMSAL(includeSecrets: true) == before)
        return thrown
    }

    @Test func aDocumentTruncatedAtARandomPointIsRefusedWhereItEnds() throws {
        #expect(Self.document.count > Self.size)
        var random = SeededGenerator(state: UInt64(UInt32.random(in: 0...UInt32.max)))
        let seed = random.state
        let cut = Int.random(in: 1..<Self.document.count, using: &random)
        let thrown = try refused(Array(Self.document[..<cut]))
        // The parser stops at the end, or at the start of the string or number the cut split.
        let reported = thrown.flatMap { offset(in: $0.message) }
        #expect(reported.map { $0 <= cut && $0 >= cut - 700 } == true, "seed \(seed), cut at \(cut): \(thrown?.message ?? "")")
    }

    @Test func aDocumentThatRepeatsAKeyIsRefusedAtTheRepeat() throws {
        // The first access token again, as the last one: its key is the first member's.
        let document = Self.document
        let start = Array(#"{"AccessToken": {"#.utf8).count
        let end = document[start...].firstIndex(of: UInt8(ascii: "}"))! + 1  // entries nest no object
        let sectionEnd = document.lastIndex(of: Array(#"}, "Account""#.utf8))
        let repeatAt = sectionEnd + 2
        let repeated = Array(document[..<sectionEnd]) + Array(", ".utf8) + document[start..<end] + document[sectionEnd...]
        let thrown = try refused(repeated)
        #expect(thrown.flatMap { offset(in: $0.message) } == repeatAt, "\(thrown?.message ?? "")")
        #expect(thrown?.message.contains(#"an entry's key in section "AccessToken""#) == true)
    }
}

extension Array where Element == UInt8 {
    /// Where `needle` last starts in the array.
    fileprivate func lastIndex(of needle: [UInt8]) -> Int {
        // memcmp over the buffer, not a slice made and compared at each position: in a debug build,
        // and more so under AddressSanitizer, that walk back over the accounts would be most of the test.
        withUnsafeBytes { bytes in
            needle.withUnsafeBytes { wanted in
                var index = count - wanted.count
                while index >= 0,
                    bytes[index] != wanted[0] || memcmp(bytes.baseAddress! + index, wanted.baseAddress!, wanted.count) != 0
                {
                    index -= 1
                }
                return index
            }
        }
    }
}
