/// Per-client sign-in state kept in a group (the Apple SDK's account metadata): which accounts
/// the client signed into or out of, and its current and previous account.
struct ClientState: Sendable, Hashable {
    /// Home account ids (lower-cased) the client signed in with.
    var signedIn: Set<String> = []
    /// Home account ids (lower-cased) the client signed out of; hidden from the client.
    var signedOut: Set<String> = []
    /// The account the client last signed in with.
    var current: String?
    /// The account that was current before ``current``.
    var previous: String?

    var isEmpty: Bool { signedIn.isEmpty && signedOut.isEmpty && current == nil && previous == nil }

    mutating func signIn(_ account: String) {
        signedIn.insert(account)
        signedOut.remove(account)
        if current != account {
            if current != nil { previous = current }
            current = account
        }
    }

    mutating func signOut(_ account: String) {
        signedIn.remove(account)
        signedOut.insert(account)
        if current == account {
            previous = account
            current = nil
        }
    }

    mutating func forget(_ account: String) {
        signedIn.remove(account)
        signedOut.remove(account)
        if current == account { current = nil }
        if previous == account { previous = nil }
    }

    var json: JSONValue {
        var object = JSONObject()
        object["signed_in"] = .array(signedIn.sorted().map(JSONValue.string))
        object["signed_out"] = .array(signedOut.sorted().map(JSONValue.string))
        if let current { object["current"] = .string(current) }
        if let previous { object["previous"] = .string(previous) }
        return .object(object)
    }

    init() {}

    init(json: JSONValue) throws {
        guard case .object(let object) = json else {
            throw TokenCacheError(.storeCorrupted, "a client state record is not a JSON object")
        }
        func strings(_ name: String) -> Set<String> {
            guard case .array(let values)? = object[name] else { return [] }
            return Set(values.compactMap(\.stringValue))
        }
        signedIn = strings("signed_in")
        signedOut = strings("signed_out")
        current = object.string("current")
        previous = object.string("previous")
    }
}
