/// A new group's key and the header record that finds it again.
struct ProvidedKey: ~Copyable {
    /// The key.
    var key: SecretKey
    /// What the group's header records about it.
    var source: KeySource
}
