import Testing

@testable import SecureTokenCache

@Suite struct ScopesTests {
    @Test func matchingIsCaseInsensitiveAndIgnoresReservedScopes() {
        let stored = Scopes(target: "Mail.Read User.Read openid profile")
        #expect(Scopes(["user.read"]).isSubset(of: stored))
        #expect(Scopes(["USER.READ", "Mail.Read", "openid", "profile", "offline_access"]).isSubset(of: stored))
        #expect(!Scopes(["User.Read", "Calendars.Read"]).isSubset(of: stored))
    }

    @Test func targetIsSortedByCodePointOnOriginalCase() {
        #expect(Scopes(["profile", "openid", "email", "User.Read"]).target == "User.Read email openid profile")
    }

    @Test func intersectionIgnoresReservedScopes() {
        #expect(!Scopes(["openid", "a"]).intersects(Scopes(["openid", "b"])))
        #expect(Scopes(["A", "b"]).intersects(Scopes(["a"])))
    }
}
