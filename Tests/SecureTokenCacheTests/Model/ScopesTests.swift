import Testing

@testable import SecureTokenCache

@Suite(.timeLimit(.minutes(1))) struct ScopesTests {
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

    @Test func targetsSplitOnAnyWhitespaceAndKeepTheFirstSpelling() {
        let scopes = Scopes(target: "  User.Read\tMAIL.read\nuser.READ  Mail.Read ")
        #expect(scopes.values == ["User.Read", "MAIL.read"])
        #expect(scopes == Scopes(["mail.read", "user.read"]))
        #expect(Scopes(target: "openid profile").isEmptyForMatching)
        #expect(Scopes(target: "").values.isEmpty)
    }

    @Test func lowerCasingMatchesTheStandardLibrary() {
        for text in ["", "abc", "ABC", "User.Read", "72F988BF-86f1", "Ünïcödé.Read", "ÀB", "a\u{0130}b", "already-lower"] {
            #expect(text.asciiLowercased == text.lowercased())
        }
        let id = HomeAccountId("Uid-1.TENANT-2")
        #expect(id.normalised == "uid-1.tenant-2" && id.normalisedTenantId == "tenant-2")
        #expect(id.objectId == "Uid-1" && id.tenantId == "TENANT-2")
        #expect(HomeAccountId("adfs-sub").tenantId == nil && HomeAccountId("adfs-sub").objectId == "adfs-sub")
        #expect(HomeAccountId("uid.").tenantId == nil && HomeAccountId("uid.").normalisedTenantId == nil)
    }
}
