import Testing

@testable import SecureTokenCache

/// The outline of an object compared with an earlier version: the same members the plain
/// outline finds, each matched with the earlier member of its key, and "unchanged" exactly when
/// the member's bytes are the earlier member's.
@Suite(.timeLimit(.minutes(1))) struct JSONOutlineTests {
    /// An earlier object and the next version of it.
    struct Edit: Sendable, CustomTestStringConvertible {
        let name: String
        let earlier: String
        let next: String
        var testDescription: String { name }
    }

    static let edits: [Edit] = [
        Edit(name: "nothing changed", earlier: #"{"a":"x","b":1,"c":{"d":2}}"#, next: #"{"a":"x","b":1,"c":{"d":2}}"#),
        Edit(name: "a number grows at the end of the run", earlier: #"{"a":"x","b":1}"#, next: #"{"a":"x","b":12}"#),
        Edit(name: "a literal grows", earlier: #"{"a":"x","b":tru}"#, next: #"{"a":"x","b":true}"#),
        Edit(name: "a string changes in the middle", earlier: #"{"a":"x","b":"y","c":"z"}"#, next: #"{"a":"x","b":"Y","c":"z"}"#),
        Edit(name: "a member is inserted", earlier: #"{"a":"x","c":"z"}"#, next: #"{"a":"x","b":"y","c":"z"}"#),
        Edit(name: "a member is removed", earlier: #"{"a":"x","b":"y","c":"z"}"#, next: #"{"a":"x","c":"z"}"#),
        Edit(name: "members swap", earlier: #"{"a":"x","b":"y","c":"z"}"#, next: #"{"b":"y","a":"x","c":"z"}"#),
        Edit(name: "whitespace moves", earlier: #"{"a":"x", "b":"y","c":"z"}"#, next: #"{"a":"x","b":"y", "c":"z"}"#),
        Edit(name: "a key is renamed", earlier: #"{"a":"x","b":"y"}"#, next: #"{"a":"x","B":"y"}"#),
        Edit(name: "a key is spelled with an escape", earlier: #"{"a":"x","bc":"y"}"#, next: #"{"a":"x","b\u0063":"y"}"#),
        Edit(name: "an escaped key is spelled plainly", earlier: #"{"a\u00e9":"x","b":"y"}"#, next: #"{"aé":"x","b":"y"}"#),
        Edit(name: "the object ends early", earlier: #"{"a":"x","b":"y"}"#, next: #"{"a":"x"}"#),
        Edit(name: "a nested value changes", earlier: #"{"a":{"k":[1,2]},"b":2}"#, next: #"{"a":{"k":[1,3]},"b":2}"#),
        Edit(name: "a number shrinks before a comma", earlier: #"{"a":10,"b":2}"#, next: #"{"a":1,"b":2}"#),
        Edit(
            name: "many members, one changed in the middle",
            earlier: "{" + (0..<200).map { #""k\#($0)":"v\#($0)""# }.joined(separator: ",") + "}",
            next: "{" + (0..<200).map { $0 == 117 ? #""k117":"changed""# : #""k\#($0)":"v\#($0)""# }.joined(separator: ",") + "}"),
    ]

    @Test(arguments: edits) func theComparedOutlineIsThePlainOutlineWithMatches(edit: Edit) throws {
        let earlierBytes = Array(edit.earlier.utf8)
        let nextBytes = Array(edit.next.utf8)
        let earlier = try #require(try JSONOutline.members(of: earlierBytes, in: 0..<earlierBytes.count))
        let plain = try #require(try JSONOutline.members(of: nextBytes, in: 0..<nextBytes.count))
        let compared = try #require(
            try JSONOutline.members(of: nextBytes, in: 0..<nextBytes.count, comparedWith: earlier, in: earlierBytes))

        #expect(compared.members.map { $0.name(in: nextBytes) } == plain.map { $0.name(in: nextBytes) })
        #expect(compared.members.map(\.key) == plain.map(\.key))
        #expect(compared.members.map(\.value) == plain.map(\.value))
        for (member, match) in zip(compared.members, compared.matches) {
            let name = member.name(in: nextBytes)
            let position = earlier.firstIndex { $0.name(in: earlierBytes) == name }
            #expect(match.earlier == position, "\(name) matched the wrong earlier member")
            let same = position.map { nextBytes[member.bytes].elementsEqual(earlierBytes[earlier[$0].bytes]) } ?? false
            #expect(match.unchanged == same, "\(name): unchanged is \(match.unchanged), its bytes say \(same)")
        }
    }

    @Test func theCommonLengthIsWhereTheBytesFirstDiffer() {
        let earlier = [UInt8](repeating: 7, count: 10_000)
        for difference in [0, 1, 15, 16, 255, 256, 4095, 4096, 4097, 9_999] {
            var next = earlier
            next[difference] = 8
            let common = next.withUnsafeBufferPointer { a in
                earlier.withUnsafeBufferPointer { b in JSONOutline.commonLength(a.baseAddress!, b.baseAddress!, a.count) }
            }
            #expect(common == difference)
        }
        let whole = earlier.withUnsafeBufferPointer { JSONOutline.commonLength($0.baseAddress!, $0.baseAddress!, 9_000) }
        #expect(whole == 9_000)
    }
}
