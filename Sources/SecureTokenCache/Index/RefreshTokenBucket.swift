/// Where refresh tokens of one account and cloud are filed, by owning client or by family.
struct RefreshTokenBucket: Hashable, Sendable {
    var account: HashedString
    var environment: HashedString
    var owner: HashedString
}

extension RefreshTokenBucket: PrehashedKey {
    /// The parts' hashes, combined.
    var prehash: Int {
        let hash = HashMixer.combine(HashMixer.combine(HashMixer.seed, account.prehash), environment.prehash)
        return HashMixer.combine(hash, owner.prehash)
    }
}

extension RefreshTokenBucket: FilingKey {
    /// The bucket of account, cloud and owner, in that order.
    init(filingParts part: (Int) -> HashedString) {
        self.init(account: part(0), environment: part(1), owner: part(2))
    }
}
