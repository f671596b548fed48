extension CacheEntry {
    /// The members this engine writes for each kind: a new entry's value (or its absence)
    /// decides them. Every other member of a stored entry (another SDK's `enrollment_id`,
    /// `ext`, `name`, msal-python's `account_source`, ...) is the stored entry's to keep.
    static func ownedFields(of kind: CredentialKind) -> [KnownField] {
        switch kind {
        case .accessToken:
            [
                .credentialType, .secret, .homeAccountId, .environment, .clientId, .target, .realm, .tokenType, .cachedAt,
                .expiresOn, .extendedExpiresOn, .extExpiresOn, .refreshOn, .keyId, .extCacheKey,
            ]
        case .refreshToken:
            [.credentialType, .secret, .homeAccountId, .environment, .clientId, .target, .lastModificationTime, .familyId]
        case .idToken:
            [.credentialType, .secret, .homeAccountId, .environment, .realm, .clientId]
        case .account:
            [.homeAccountId, .environment, .realm, .localAccountId, .username, .authorityType]
        case .appMetadata:
            [.clientId, .environment, .familyId]
        }
    }

    /// This (new) entry, with the members of `old` it does not own appended: what an update of
    /// `old` must write so that fields other SDKs (or msal-python) stored survive it (rule 1).
    ///
    /// Replacing a stored entry wholesale would drop unknown fields, and an Account's
    /// `account_source` or `name`, on every token refresh.
    func keepingUnknownFields(of old: CacheEntry) -> CacheEntry {
        guard old.kind == kind else { return self }
        // One bit per owned field's code: a member is looked up once, not compared by name.
        let owned = Self.ownedFields(of: kind).reduce(UInt32(0)) { $0 | 1 << UInt32($1.rawValue) }
        // A payload holding only owned members (what this engine writes) has nothing to keep:
        // known without decoding it.
        if case .payload(let payload) = old.members, EntryPayload.holdsOnly(owned, payload) { return self }
        var fields = self.fields
        var kept = false
        for (key, value) in old.fields {
            if let field = KnownField(name: key), owned & 1 << UInt32(field.rawValue) != 0 { continue }
            guard fields[key] == nil else { continue }
            fields[key] = value
            kept = true
        }
        return kept ? CacheEntry(kind: kind, fields: fields) : self
    }
}
