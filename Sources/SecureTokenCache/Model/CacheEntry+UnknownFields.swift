extension CacheEntry {
    /// The members this engine writes for each kind: a new entry's value (or its absence)
    /// decides them. Every other member of a stored entry (another SDK's `enrollment_id`,
    /// `ext`, `name`, msal-python's `account_source`, ...) is the stored entry's to keep.
    static func ownedFields(of kind: CredentialKind) -> Set<String> {
        switch kind {
        case .accessToken:
            [
                "credential_type", "secret", "home_account_id", "environment", "client_id", "target", "realm", "token_type",
                "cached_at", "expires_on", "extended_expires_on", "ext_expires_on", "refresh_on", "key_id", "ext_cache_key",
            ]
        case .refreshToken:
            [
                "credential_type", "secret", "home_account_id", "environment", "client_id", "target", "last_modification_time",
                "family_id",
            ]
        case .idToken:
            ["credential_type", "secret", "home_account_id", "environment", "realm", "client_id"]
        case .account:
            ["home_account_id", "environment", "realm", "local_account_id", "username", "authority_type"]
        case .appMetadata:
            ["client_id", "environment", "family_id"]
        }
    }

    /// This (new) entry, with the members of `old` it does not own appended: what an update of
    /// `old` must write so that fields other SDKs (or msal-python) stored survive it (rule 1).
    ///
    /// Replacing a stored entry wholesale would drop unknown fields, and an Account's
    /// `account_source` or `name`, on every token refresh.
    func keepingUnknownFields(of old: CacheEntry) -> CacheEntry {
        guard old.kind == kind else { return self }
        let owned = Self.ownedFields(of: kind)
        var fields = self.fields
        for (key, value) in old.fields where !owned.contains(key) && fields[key] == nil {
            fields[key] = value
        }
        return fields == self.fields ? self : CacheEntry(kind: kind, fields: fields)
    }
}
