import Foundation
import HashTreeCollections
import Testing

@testable import SecureTokenCache

/// A client's sign-in state (``ClientState``) as records: one per account, one for the client's
/// current and previous account; what a sign-in commits, what another group reads back, and how a
/// record that lists every account (written before) is carried over.
@Suite(.timeLimit(.minutes(1))) struct SignInStateTests {
    /// The records a group at `cursor` has not seen, and the cursor after them.
    private func changes(in store: any CacheStore, since cursor: StoreCursor) throws -> [RecordChange] {
        guard case .changes(let changes, _) = try store.update(since: cursor) else {
            Issue.record("the store answered other than with changes")
            return []
        }
        return changes
    }

    private func user(_ number: Int) -> String { String(format: "00000000-0000-0000-1111-%012d", number) }

    @Test func aSignInCommitsTheAccountItChangedNotEveryAccountTheClientSignedInto() throws {
        let group = try Fixtures.group()
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        for number in 0..<300 {
            try cache.store(try Fixtures.response(uid: user(number)), for: try Fixtures.request())
        }
        let before = try group.snapshot().cursor
        try cache.store(try Fixtures.response(uid: user(300)), for: try Fixtures.request())
        let committed = try changes(in: group.store, since: before)
        let signIns = committed.filter { change in
            guard case .put(let record) = change else { return false }
            return record.id.kind == .signInState
        }
        let clientRecords = committed.compactMap { change -> Record? in
            guard case .put(let record) = change, record.id.kind == .clientState else { return nil }
            return record
        }
        // One record for the new account, and the client's own, which names two accounts only.
        #expect(signIns.count == 1)
        #expect(clientRecords.count == 1)
        #expect(clientRecords.allSatisfy { $0.payload.count < 200 })
        #expect(try group.index().clientStates[Fixtures.clientA]?.signedIn.count == 301)
    }

    /// Below the listing limit (one record) and past it (a record per account).
    @Test(arguments: [4, IndexTransaction.listingLimit + 30])
    func anotherGroupReadsTheSameStateFromTheRecords(users: Int) throws {
        let group = try Fixtures.group()
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        let other = try TokenCache(clientId: Fixtures.clientB, group: group)
        // A group that follows every commit as it comes (another process's view).
        let follower = try CacheGroup(name: "test", store: group.store, clock: group.clock)
        _ = try follower.index()
        for number in 0..<users {
            try cache.store(try Fixtures.response(uid: user(number)), for: try Fixtures.request())
        }
        try other.store(try Fixtures.response(uid: user(0)), for: try Fixtures.request(client: Fixtures.clientB))
        let accounts = try cache.accounts()
        func account(_ number: Int) throws -> Account {
            try #require(accounts.first { $0.homeAccountId.rawValue.hasPrefix(user(number)) })
        }
        try cache.signOut(try account(1))
        try cache.signOut(try account(3))
        try group.clear(.account(try account(2).homeAccountId.rawValue))

        let fresh = try CacheGroup(name: "test", store: group.store, clock: group.clock)
        let written = try group.index().clientStates
        #expect(try fresh.index().clientStates == written)
        #expect(try follower.index().clientStates == written)
        let state = try #require(written[Fixtures.clientA])
        #expect(state.signedIn.count == users - 3 && state.signedOut.count == 2)
        #expect(state.listedInClientRecord == (users <= IndexTransaction.listingLimit))
        // Signing out of the current account (the last signed in, when it is user 3) leaves none.
        #expect((state.current == nil) == (users == 4) && state.previous != nil)
        #expect(written[Fixtures.clientB]?.signedIn.count == 1)
        // Clearing a client takes every record of its state with it.
        try group.clear(.client(Fixtures.clientA))
        let cleared = try CacheGroup(name: "test", store: group.store, clock: group.clock)
        #expect(try cleared.index().clientStates[Fixtures.clientA] == nil)
        #expect(try cleared.index().clientStates == group.index().clientStates)
        #expect(try follower.index().clientStates == group.index().clientStates)
        let (records, _) = try group.store.load()
        #expect(!records.contains { $0.id.kind == .signInState && $0.id.name.hasPrefix(Fixtures.clientA + "\n") })
    }

    /// A client record listing every account, as every version writes and reads it, stays one
    /// while the client has few accounts; past the listing limit its accounts are written as
    /// records of their own, and below it again as one record.
    @Test func aStateIsOneListingRecordUpToTheLimitAndARecordPerAccountPastIt() throws {
        let store = MemoryStore(name: "test")
        let client = Fixtures.clientA
        var listing = JSONObject()
        listing["signed_in"] = .array([.string("a.t"), .string("b.t")])
        listing["signed_out"] = .array([.string("c.t")])
        listing["current"] = .string("a.t")
        listing["previous"] = .string("b.t")
        var payload: [UInt8] = [RecordCodec.formatVersion]
        JSONWriter.write(.object(listing), style: .compact, into: &payload)
        _ = try store.transact(since: try store.load().1) { _ in
            [.put(Record(id: RecordID(kind: .clientState, name: client), payload: payload))]
        }
        let group = try CacheGroup(name: "test", store: store, clock: { 1_700_000_000 })
        let read = try #require(try group.index().clientStates[client])
        #expect(Set(read.signedIn) == ["a.t", "b.t"] && Set(read.signedOut) == ["c.t"])

        /// The client's records: whether its own lists the accounts, and the accounts with a record.
        func stored() throws -> (listing: Bool, accounts: Set<String>) {
            let (records, _) = try store.load()
            let own = try #require(records.first { $0.id.kind == .clientState })
            guard case .clientState(_, let state) = try RecordCodec.decode(own) else {
                throw TokenCacheError(.storeCorrupted, "the client's record decodes to something else")
            }
            let accounts = try records.filter { $0.id.kind == .signInState }.map {
                try RecordCodec.signInNames($0.id.name).account
            }
            return (state.listedInClientRecord, Set(accounts))
        }
        func expectReadAlike() throws {
            let fresh = try CacheGroup(name: "test", store: store, clock: { 1_700_000_000 })
            #expect(try fresh.index().clientStates[client] == group.index().clientStates[client])
        }

        try group.write { $0.updateClientState(client) { $0.signIn("d.t") } }
        #expect(try stored() == (true, []))
        try expectReadAlike()

        let many = (0..<IndexTransaction.listingLimit).map { "user-\($0).t" }
        for account in many { try group.write { $0.updateClientState(client) { $0.signIn(account) } } }
        let past = try stored()
        #expect(!past.listing && past.accounts == Set(many + ["a.t", "b.t", "c.t", "d.t"]))
        try expectReadAlike()
        let state = try #require(try group.index().clientStates[client])
        #expect(state.current == many.last && state.previous == many.dropLast().last && state.signedOut == ["c.t"])

        for account in many.prefix(10) { try group.write { $0.updateClientState(client) { $0.forget(account) } } }
        #expect(try stored() == (true, []))
        try expectReadAlike()
        #expect(try group.index().clientStates[client]?.signedIn.count == IndexTransaction.listingLimit - 10 + 3)
    }

    /// A sign-in record is named by the client and the account on two lines: a client id that
    /// could end the first line early is refused where a cache is made.
    @Test func aClientIdThatIsEmptyOrHasALineBreakIsRefused() throws {
        let group = try Fixtures.group()
        for clientId in ["", "a\nb", "\(Fixtures.clientA)\r\n"] {
            #expect(throws: TokenCacheError.self) { _ = try TokenCache(clientId: clientId, group: group) }
        }
        #expect(try TokenCache(clientId: Fixtures.clientA, group: group).clientId == Fixtures.clientA)
    }

    /// The client's record is written without a JSON object made first: the same bytes as the
    /// object written by ``JSONWriter``, read back as the same state.
    @Test func aClientRecordIsTheCompactJSONOfItsState() throws {
        var states: [ClientState] = [ClientState()]
        var state = ClientState()
        state.signIn(user(2))
        states.append(state)
        // Out of order, a name that needs escaping, a sign-out of the current account.
        for account in [user(9), "a\"b\\c\u{1}é", user(1)] { state.signIn(account) }
        state.signOut(user(1))
        states.append(state)
        state.signOut(user(9))
        state.signOut(user(2))
        states.append(state)
        for state in states {
            var head = JSONObject()
            if let current = state.current { head["current"] = .string(current) }
            if let previous = state.previous { head["previous"] = .string(previous) }
            for (listed, json) in [(true, state.json), (false, JSONValue.object(head))] {
                let record =
                    listed ? RecordCodec.record(listing: state, client: "c") : RecordCodec.record(clientState: state, client: "c")
                #expect(Array(record.payload) == [RecordCodec.formatVersion] + JSONWriter.bytes(json, style: .compact))
                guard case .clientState(let client, let read) = try RecordCodec.decode(record) else {
                    Issue.record("a client record read back as something else")
                    continue
                }
                #expect(client == "c")
                #expect(read.current == state.current && read.previous == state.previous)
                if listed { #expect(read.signedIn == state.signedIn && read.signedOut == state.signedOut) }
            }
        }
    }

    @Test func aDamagedSignInRecordIsATypedError() throws {
        let unnamed = Record(id: RecordID(kind: .signInState, name: "no line break"), payload: [RecordCodec.formatVersion, 1])
        let unknown = RecordCodec.record(signIn: .signedIn, client: "c", account: "a")
        let damaged = Record(id: unknown.id, payload: [RecordCodec.formatVersion, 9])
        for record in [unnamed, damaged] {
            #expect(throws: TokenCacheError.self) { _ = try RecordCodec.decode(record) }
        }
    }
}
