import Testing

@testable import SecureTokenCache

/// `LayeredMap` behaves like a dictionary with value semantics, whatever mix of bulk-built base,
/// changes, removals and folds it went through, and a copy never sees later changes.
@Suite(.timeLimit(.minutes(1))) struct LayeredMapTests {
    private func check(_ map: LayeredMap<CollidingKey, String>, equals reference: [CollidingKey: String]) {
        #expect(map.count == reference.count)
        #expect(map.isEmpty == reference.isEmpty)
        var seen: [CollidingKey: String] = [:]
        map.forEach { key, value in
            #expect(seen.updateValue(value, forKey: key) == nil, "key \(key) visited twice")
        }
        #expect(seen == reference)
        #expect(Set(map.keys) == Set(reference.keys))
        #expect(map.values.sorted() == reference.values.sorted())
        for key in (-5..<300).map({ CollidingKey($0) }) { #expect(map[key] == reference[key], "key \(key)") }
    }

    @Test(arguments: [0, 10, 200])
    func randomChangesMatchADictionaryAndCopiesKeepTheirContents(baseCount: Int) {
        var generator = SeededGenerator(state: UInt64(baseCount) + 1)
        var reference: [CollidingKey: String] = [:]
        for key in 0..<baseCount { reference[CollidingKey(key)] = "base-\(key)" }
        var map = LayeredMap(reference)
        var snapshots: [(LayeredMap<CollidingKey, String>, [CollidingKey: String])] = []
        for step in 0..<2_000 {
            let key = CollidingKey(Int.random(in: 0..<250, using: &generator))
            switch Int.random(in: 0..<4, using: &generator) {
            case 0:
                #expect(map.removeValue(forKey: key) == reference.removeValue(forKey: key))
            case 1:
                #expect(map.updateValue("step-\(step)", forKey: key) == reference.updateValue("step-\(step)", forKey: key))
            case 2:
                // In place: appended to, replaced, removed or made, as the dictionary is.
                let choice = Int.random(in: 0..<3, using: &generator)
                func change(_ value: inout String?) {
                    switch choice {
                    case 0: value = value.map { $0 + "+\(step)" }
                    case 1: value = nil
                    default: value = "made-\(step)"
                    }
                }
                map.modifyValue(forKey: key, change)
                change(&reference[key])
            default:
                let value: String? = Bool.random(using: &generator) ? nil : "set-\(step)"
                map[key] = value
                reference[key] = value
            }
            if step % 250 == 0 { snapshots.append((map, reference)) }
        }
        check(map, equals: reference)
        for (snapshot, contents) in snapshots { check(snapshot, equals: contents) }
    }

    @Test func aRemovedBaseKeyStaysRemovedAcrossAFold() {
        var map = LayeredMap<CollidingKey, String>([1: "one", 2: "two"])
        #expect(map.removeValue(forKey: 1) == "one")
        #expect(map.removeValue(forKey: 1) == nil)
        #expect(map[1] == nil && map.count == 1)
        // Enough changes to fold them into the base.
        for key in 100..<300 { map[CollidingKey(key)] = "\(key)" }
        #expect(map[1] == nil && map[2] == "two" && map[150] == "150" && map.count == 201)
        map[1] = "again"
        #expect(map[1] == "again" && map.count == 202)
    }
}
