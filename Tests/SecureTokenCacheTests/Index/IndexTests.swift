import TestSupport
import Testing

@testable import SecureTokenCache

@Suite(.timeLimit(.minutes(3))) struct IndexTests {
    private func stored(_ kind: CredentialKind, key: String, _ fields: JSONObject, ordinal: UInt64 = 1) -> StoredEntry {
        StoredEntry(id: EntryID(kind: kind, key: key), ordinal: ordinal, entry: CacheEntry(kind: kind, fields: fields))
    }

    private func accessToken(realm: String, secret: String) -> JSONObject {
        [
            "home_account_id": .string("uid.utid"), "environment": .string("login.microsoftonline.com"),
            "credential_type": .string("AccessToken"), "client_id": .string("Client"), "realm": .string(realm),
            "target": .string("User.Read"), "secret": .string(secret), "expires_on": .string("4102444800"),
        ]
    }

    private func bucket(realm: String) -> AccessTokenBucket {
        AccessTokenBucket(
            account: "uid.utid", environment: "login.microsoftonline.com", realm: realm, client: "client", tokenType: "bearer",
            extCacheKey: "")
    }

    @Test func replacingAnEntryUnderItsKeyRefilesItWhenItsKeysChanged() {
        var index = Index()
        index.insert(stored(.accessToken, key: "at", accessToken(realm: "tenant-a", secret: "one")))
        index.insert(stored(.accessToken, key: "at", accessToken(realm: "tenant-a", secret: "two")))
        #expect(index.accessToken(in: bucket(realm: "tenant-a"), scopes: ["User.Read"], now: 0)?.secret == "two")
        #expect(index.count == 1)

        // Same key, another tenant (a foreign cache's key shape): the old bucket must empty.
        index.insert(stored(.accessToken, key: "at", accessToken(realm: "tenant-b", secret: "three")))
        #expect(index.accessToken(in: bucket(realm: "tenant-a"), scopes: ["User.Read"], now: 0) == nil)
        #expect(index.accessToken(in: bucket(realm: "tenant-b"), scopes: ["User.Read"], now: 0)?.secret == "three")

        // A refresh token that becomes a family refresh token joins the family's bucket.
        var refresh: JSONObject = [
            "home_account_id": .string("uid.utid"), "environment": .string("login.microsoftonline.com"),
            "credential_type": .string("RefreshToken"), "client_id": .string("client"), "secret": .string("rt"),
        ]
        index.insert(stored(.refreshToken, key: "rt", refresh))
        let cloud = Environment("login.microsoftonline.com")
        #expect(index.familyRefreshTokens(account: "uid.utid", environment: cloud, family: "1").isEmpty)
        refresh["family_id"] = .string("1")
        index.insert(stored(.refreshToken, key: "rt", refresh))
        #expect(index.familyRefreshTokens(account: "uid.utid", environment: cloud, family: "1").map(\.id.key) == ["rt"])
        #expect(index.ownRefreshTokens(account: "uid.utid", environment: cloud, client: "client").count == 1)
        #expect(index.entries(account: "uid.utid").count == 2)
    }

    @Test(.tags(.slow)) func aLargeGroupDecodesInParallelInRecordOrderAndFailsOnAnyDamagedRecord() throws {
        let count = RecordCodec.parallelDecodingThreshold + 7
        var records: [Record] = []
        for number in 0..<count {
            var fields = accessToken(realm: "tenant-\(number % 3)", secret: "secret-\(number)")
            fields["target"] = .string("Scope\(number).Read")
            records.append(RecordCodec.record(stored(.accessToken, key: "at-\(number)", fields, ordinal: UInt64(number + 1))))
        }
        let index = try RecordCodec.build(records)
        #expect(index.count == count)
        var sequential = Index()
        for record in records { try RecordCodec.apply(record, to: &sequential) }
        #expect(index.documentOrder().map(\.id) == sequential.documentOrder().map(\.id))
        #expect(index.documentOrder().map(\.id.key) == records.map(\.id.name))
        // One from the last part decoded.
        let probe = count - 5
        #expect(
            index.accessToken(in: bucket(realm: "tenant-\(probe % 3)"), scopes: ["Scope\(probe).Read"], now: 0)?.secret
                == "secret-\(probe)")

        records[count - 2].payload = records[count - 2].payload.dropLast()
        #expect(throws: TokenCacheError.self) { try RecordCodec.build(records) }
    }
}
