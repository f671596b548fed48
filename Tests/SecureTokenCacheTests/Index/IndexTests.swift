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

    @Test func entriesFileAlikeExactlyWhenEveryMapSaysSo() {
        let account: JSONObject = [
            "home_account_id": .string("uid.utid"), "environment": .string("login.microsoftonline.com"),
            "realm": .string("tenant-a"), "local_account_id": .string("oid"), "username": .string("user@contoso.com"),
            "authority_type": .string("MSSTS"),
        ]
        var refresh: JSONObject = [
            "home_account_id": .string("uid.utid"), "environment": .string("login.microsoftonline.com"),
            "credential_type": .string("RefreshToken"), "client_id": .string("client"), "secret": .string("rt"),
        ]
        var idToken = refresh
        idToken["credential_type"] = .string("IdToken")
        idToken["realm"] = .string("tenant-a")
        refresh["family_id"] = .string("1")
        let bases: [(CredentialKind, JSONObject)] = [
            (.accessToken, accessToken(realm: "tenant-a", secret: "one")), (.refreshToken, refresh),
            (.idToken, idToken), (.account, account),
            (.appMetadata, ["client_id": .string("client"), "environment": .string("login.microsoftonline.com")]),
        ]
        // Each member a part of some map is read from, changed in case only, changed, and left
        // out; and one no map reads.
        let changes: [(String, JSONValue?)] = [
            ("home_account_id", .string("UID.UTID")), ("home_account_id", .string("other.utid")),
            ("environment", .string("login.windows.net")), ("environment", .string("login.chinacloudapi.cn")),
            ("realm", .string("TENANT-A")), ("realm", .string("tenant-b")), ("client_id", .string("CLIENT")),
            ("client_id", .string("other")), ("token_type", .string("Bearer")), ("token_type", .string("pop")),
            ("ext_cache_key", .string("shape")), ("family_id", .string("2")), ("family_id", nil),
            ("username", .string("USER@contoso.com")), ("username", .string("")),
            ("user_assertion_hash", .string("hash")), ("secret", .string("two")), ("target", .string("Mail.Read")),
        ]
        var alike = 0
        var unlike = 0
        for (kind, fields) in bases {
            let base = CacheEntry(kind: kind, fields: fields)
            for (name, value) in changes {
                var changed = fields
                changed[name] = value
                let other = CacheEntry(kind: kind, fields: changed)
                for (old, new) in [(base, other), (other, base)] {
                    let everyMap = IndexMaps.table.allSatisfy { $0.filesAlike(old, new) }
                    #expect(IndexMaps.filesAlike(old, new) == everyMap, "\(kind), \(name) = \(String(describing: value))")
                    if everyMap { alike += 1 } else { unlike += 1 }
                }
            }
        }
        // A refresh (a new secret) files alike; a token of another tenant does not.
        func token(realm: String, secret: String) -> CacheEntry {
            CacheEntry(kind: .accessToken, fields: accessToken(realm: realm, secret: secret))
        }
        #expect(IndexMaps.filesAlike(token(realm: "tenant-a", secret: "one"), token(realm: "tenant-a", secret: "two")))
        #expect(!IndexMaps.filesAlike(token(realm: "tenant-a", secret: "one"), token(realm: "tenant-b", secret: "one")))
        #expect(alike > 0 && unlike > 0)
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
