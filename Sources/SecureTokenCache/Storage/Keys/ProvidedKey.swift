/// A new group's key and the header record that finds it again.
///
/// Returned together so a provider cannot hand out a key without saying how to find it again.
struct ProvidedKey: ~Copyable {
    /// The key.
    var key: SecretKey
    /// What the group's header records about it.
    var source: HeaderKeySource
}
