/// How targets state their properties and build the groups they check them on.
enum FuzzProperty {
    /// The clock every target's groups read: fixed, so one input always gives one result.
    static let now: Int64 = 1_700_000_000

    /// Stops the run, which libFuzzer reports as a crash and keeps the input for, unless
    /// `condition` holds.
    static func require(
        _ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
    ) {
        guard !condition else { return }
        fatalError("property violated: \(message())", file: file, line: line)
    }

    /// `error` as the ``TokenCacheError`` a parser of outside bytes must throw, with one of
    /// `codes`; anything else violates the property.
    @discardableResult
    static func requireTyped(
        _ error: any Error, _ codes: [TokenCacheError.Code], _ what: String, file: StaticString = #fileID,
        line: UInt = #line
    ) -> TokenCacheError {
        guard let typed = error as? TokenCacheError else {
            fatalError("property violated: \(what) threw \(error), not a TokenCacheError", file: file, line: line)
        }
        require(codes.contains(typed.code), "\(what) threw \(typed.code): \(typed.message)", file: file, line: line)
        return typed
    }

    /// An empty group in memory, on the fixed clock.
    static func group() -> CacheGroup {
        // A fresh memory store cannot fail to load.
        try! CacheGroup(name: "fuzz", store: MemoryStore(name: "fuzz"), clock: { now })
    }

    /// Everything `group` holds, secrets included, as an MSAL document.
    static func export(_ group: CacheGroup) -> [UInt8] {
        do {
            return try group.exportMSAL(includeSecrets: true)
        } catch {
            fatalError("property violated: a memory group failed to export: \(error)")
        }
    }

    /// `input` cut at its NUL bytes, which valid JSON never holds outside a string's escapes:
    /// how a target that needs several documents reads them from one input.
    static func parts(_ input: [UInt8]) -> [[UInt8]] {
        input.split(separator: 0, omittingEmptySubsequences: false).map(Array.init)
    }

    /// A small MSAL document with an account and an access token, for targets that check that a
    /// failed import leaves a group that holds something unchanged.
    static let occupiedDocument = Array(
        #"""
        {"AccessToken": {"u.t-login.microsoftonline.com-accesstoken-c-t-user.read": {"credential_type": "AccessToken", \#
        "secret": "at", "home_account_id": "u.t", "environment": "login.microsoftonline.com", "client_id": "c", \#
        "target": "User.Read", "realm": "t", "token_type": "Bearer", "cached_at": "1700000000", \#
        "expires_on": "1700003600", "extended_expires_on": "1700003600"}}, \#
        "Account": {"u.t-login.microsoftonline.com-t": {"home_account_id": "u.t", \#
        "environment": "login.microsoftonline.com", "realm": "t", "local_account_id": "u", "username": "a@b.c", \#
        "authority_type": "MSSTS"}}}
        """#.utf8)
}
