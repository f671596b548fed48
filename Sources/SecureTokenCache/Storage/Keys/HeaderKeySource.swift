/// How a file group's key is found again, as the group's ``GroupHeader`` records it.
///
/// This is the only key record the library writes: it names the kind of key and, for a
/// passphrase, the public Argon2id salt and limits, never a secret or a path. Callers choose a
/// key with ``CacheConfiguration/KeySource``; the provider made from that choice writes this
/// record for a new group and reads it back for an existing one.
enum HeaderKeySource: Sendable, Hashable {
    /// Derived with Argon2id from a passphrase, with this salt and these limits.
    case passphrase(salt: [UInt8], parameters: Argon2idParameters)
    /// Read from a key file. The header does not say which: the caller names it, so moving the
    /// file does not strand the group.
    case keyFile
    /// Held by the Secret Service as the group's key item (see ``KeyringKeyProvider``).
    case keyring

    /// The protection this source gives.
    var protectionLevel: ProtectionLevel {
        switch self {
        case .passphrase: .passphrase
        case .keyFile: .keyFile
        case .keyring: .keyring
        }
    }
}
