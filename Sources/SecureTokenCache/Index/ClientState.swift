import HashTreeCollections

/// Per-client sign-in state kept in a group (the Apple SDK's account metadata): which accounts
/// the client signed into or out of, and its current and previous account.
///
/// A desktop app's few accounts are listed in the client's record (``RecordKind/clientState``),
/// which every version reads. A web app signs a great many users in through one client: past
/// ``IndexTransaction/listingLimit`` accounts (and always in a group each instance holds only part
/// of), each account has a record of its own (``RecordKind/signInState``) and the client's record
/// keeps its current and previous account, so that a sign-in writes what it changed, not every
/// account the client ever signed into. The sets are persistent, so a writer's copy shares them
/// with the snapshot readers hold instead of copying every account.
struct ClientState: Sendable, Hashable {
    /// Home account ids (lower-cased) the client signed in with.
    var signedIn: TreeSet<String> = []
    /// Home account ids (lower-cased) the client signed out of; hidden from the client.
    var signedOut: TreeSet<String> = []
    /// The account the client last signed in with.
    var current: String?
    /// The account that was current before ``current``.
    var previous: String?
    /// Whether the state is stored as the client's record listing every account, rather than a
    /// record per account (see the type's rule).
    var listedInClientRecord = false

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

    /// Where an account stands with the client: signed in, signed out, or neither (`nil`).
    func standing(of account: String) -> SignInStanding? {
        if signedIn.contains(account) { return .signedIn }
        if signedOut.contains(account) { return .signedOut }
        return nil
    }

    /// Sets where an account stands with the client (`nil`: neither signed in nor out).
    mutating func setStanding(_ standing: SignInStanding?, of account: String) {
        switch standing {
        case .signedIn?:
            signedIn.insert(account)
            signedOut.remove(account)
        case .signedOut?:
            signedOut.insert(account)
            signedIn.remove(account)
        case nil:
            signedIn.remove(account)
            signedOut.remove(account)
        }
    }

    /// The accounts whose standing differs between `self` and `other`. Persistent sets compare
    /// the parts they share by identity, so after a sign-in this visits what changed, not every
    /// account.
    func accountsChanged(since other: ClientState) -> TreeSet<String> {
        signedIn.symmetricDifference(other.signedIn).union(signedOut.symmetricDifference(other.signedOut))
    }

    /// The whole state as one JSON object, every account listed: the client's record while it
    /// lists them, and the form the shared MSAL document's extras section keeps.
    var json: JSONValue {
        var object = JSONObject()
        object["signed_in"] = .array(signedIn.sorted().map(JSONValue.string))
        object["signed_out"] = .array(signedOut.sorted().map(JSONValue.string))
        if let current { object["current"] = .string(current) }
        if let previous { object["previous"] = .string(previous) }
        return .object(object)
    }

    /// Appends what the client's own record holds, in the compact style: ``json`` when `listing`
    /// (byte for byte as ``JSONWriter`` writes it), else only its `current` and `previous`
    /// members. Written without making the object first: the record is written on every sign-in
    /// and sign-out.
    func writeCompactJSON(listing: Bool, into output: inout [UInt8]) {
        var first = true
        func name(_ name: StaticString) {
            output.append(UInt8(ascii: first ? "{" : ","))
            first = false
            name.withUTF8Buffer {
                JSONWriter.writeName(utf8: UnsafeRawBufferPointer($0), plain: true, style: .compact, into: &output)
            }
        }
        func list(_ member: StaticString, _ accounts: TreeSet<String>) {
            name(member)
            var next = accounts.sorted().makeIterator()
            JSONWriter.writeContainer(count: accounts.count, brackets: ("[", "]"), style: .compact, level: 1, into: &output) {
                JSONWriter.writeString(next.next()!, style: .compact, into: &$0)
            }
        }
        if listing {
            list("signed_in", signedIn)
            list("signed_out", signedOut)
        }
        if let current {
            name("current")
            JSONWriter.writeString(current, style: .compact, into: &output)
        }
        if let previous {
            name("previous")
            JSONWriter.writeString(previous, style: .compact, into: &output)
        }
        output.append(contentsOf: first ? [UInt8(ascii: "{"), UInt8(ascii: "}")] : [UInt8(ascii: "}")])
    }

    init() {}

    /// The state a client record holds: its current and previous account, and, in a record that
    /// lists them, the accounts signed in and out.
    init(json: JSONValue) throws {
        guard case .object(let object) = json else {
            throw TokenCacheError(.storeCorrupted, "a client state record is not a JSON object")
        }
        func strings(_ name: String) -> TreeSet<String> {
            guard case .array(let values)? = object[name] else { return [] }
            return TreeSet(values.compactMap(\.stringValue))
        }
        signedIn = strings("signed_in")
        signedOut = strings("signed_out")
        listedInClientRecord = object["signed_in"] != nil || object["signed_out"] != nil
        current = object.string("current")
        previous = object.string("previous")
    }

    /// Equal when they hold the same accounts, whatever record they were read from.
    static func == (lhs: ClientState, rhs: ClientState) -> Bool {
        lhs.signedIn == rhs.signedIn && lhs.signedOut == rhs.signedOut && lhs.current == rhs.current
            && lhs.previous == rhs.previous
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(signedIn)
        hasher.combine(signedOut)
        hasher.combine(current)
        hasher.combine(previous)
    }
}

/// Where an account stands with a client (``ClientState``), as its record says.
enum SignInStanding: UInt8, Sendable {
    case signedIn = 1
    case signedOut = 2
}
