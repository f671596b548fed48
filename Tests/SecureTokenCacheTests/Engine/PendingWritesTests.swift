import Testing

@testable import SecureTokenCache

/// What an instance that kept writes in memory through an outage commits when the database
/// answers again (``CacheGroup/PendingWrites/toCommit(_:over:)``), on top of what was committed
/// meanwhile. No server needed: the commits come as the store hands them over.
@Suite(.timeLimit(.minutes(1)))
struct PendingWritesTests {
    static let token = RecordID(kind: .refreshToken, name: "user1-login.windows.net-refreshtoken-client--")
    static let other = RecordID(kind: .accessToken, name: "user4-login.windows.net-accesstoken-client-tenant-scope")

    static func put(_ id: RecordID, _ text: String) -> RecordChange {
        .put(Record(id: id, payload: Array(text.utf8)))
    }

    /// The changes as ids and payloads, to compare.
    static func described(_ changes: [RecordChange]) -> [String] {
        changes.map { change in
            switch change {
            case .put(let record): "put \(record.id.name) \(String(decoding: record.payload, as: UTF8.self))"
            case .delete(let id): "delete \(id.name)"
            }
        }
    }

    static func toCommit(_ changes: [RecordChange], over update: StoreUpdate) -> [String] {
        described(CacheGroup.PendingWrites.toCommit(changes, over: update))
    }

    @Test func withNothingCommittedMeanwhileEveryChangeIsCommitted() {
        let changes = [Self.put(Self.token, "a1"), .delete(Self.other)]
        #expect(Self.toCommit(changes, over: .unchanged(.start)) == Self.described(changes))
    }

    @Test func anotherInstancesWriteToARecordKeepsItAndTheRestIsCommitted() {
        let changes = [Self.put(Self.token, "from-a"), Self.put(Self.other, "a4")]
        let update = StoreUpdate.changes([Self.put(Self.token, "from-b")], .start)
        #expect(Self.toCommit(changes, over: update) == Self.described([Self.put(Self.other, "a4")]))
    }

    @Test func aRemovalThatReturnedStaysARemovalOverAnotherInstancesWrite() {
        // Refreshed here, then signed out here, while another instance refreshed the same token.
        let changes = [Self.put(Self.token, "from-a"), .delete(Self.token)]
        let update = StoreUpdate.changes([Self.put(Self.token, "from-b")], .start)
        #expect(Self.toCommit(changes, over: update) == ["delete \(Self.token.name)"])
    }

    @Test func aRemovedRecordWrittenAgainHereStaysWithTheOtherInstancesWrite() {
        let changes = [.delete(Self.token), Self.put(Self.token, "from-a")]
        let update = StoreUpdate.changes([Self.put(Self.token, "from-b")], .start)
        #expect(Self.toCommit(changes, over: update).isEmpty)
    }

    @Test func aCommitWhoseAnswerWasLostIsThisInstancesOwnAndWhatFollowedItIsCommitted() {
        // The first refresh reached the database though its answer did not come back; the
        // sign-out after it must not be taken for a conflict with it.
        let changes = [Self.put(Self.token, "rotated-here"), .delete(Self.token)]
        let update = StoreUpdate.changes([Self.put(Self.token, "rotated-here")], .start)
        #expect(Self.toCommit(changes, over: update) == Self.described(changes))
        // Nor a second rotation.
        let rotations = [Self.put(Self.token, "first"), Self.put(Self.token, "second")]
        #expect(
            Self.toCommit(rotations, over: .changes([Self.put(Self.token, "first")], .start)) == Self.described(rotations))
        // A removal of its own, likewise.
        let removed = [.delete(Self.token), Self.put(Self.token, "again")]
        #expect(Self.toCommit(removed, over: .changes([.delete(Self.token)], .start)) == Self.described(removed))
    }

    @Test func onlyTheLastCommitMeanwhileDecidesWhoseARecordIs() {
        // This instance's commit landed, then another instance wrote over it.
        let changes = [Self.put(Self.token, "mine"), Self.put(Self.token, "mine again")]
        let update = StoreUpdate.changes([Self.put(Self.token, "mine"), Self.put(Self.token, "theirs")], .start)
        #expect(Self.toCommit(changes, over: update).isEmpty)
    }

    @Test func afterAReloadEveryChangeIsCommittedAsMade() {
        // The database no longer holds the history since the first write kept in memory: that a
        // record is there says nothing of who wrote it last.
        let changes = [Self.put(Self.token, "from-a"), .delete(Self.other)]
        let update = StoreUpdate.reload(
            [Record(id: Self.token, payload: Array("before".utf8)), Record(id: Self.other, payload: Array("a4".utf8))],
            .start)
        #expect(Self.toCommit(changes, over: update) == Self.described(changes))
    }
}
