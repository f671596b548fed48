/// The protection a group's data has at rest.
public enum ProtectionLevel: String, Sendable, Hashable, CustomStringConvertible {
    /// Sealed with a key held by the Secret Service (the desktop keyring).
    case keyring
    /// Sealed with a key derived from a passphrase (Argon2id).
    case passphrase
    /// Sealed with a key read from a key file (0600).
    case keyFile
    /// Held in process memory only; nothing is written anywhere.
    case memoryOnly
    /// Not sealed: plaintext JSON in a file another tool shares (``MSALSharedCache``), protected
    /// only by the file's mode.
    case plaintextFile
    /// Not sealed: JSON in a Secret Service item another tool shares (``MSALSharedCache``), which
    /// any process of the user can read while the collection is unlocked.
    case keyringItem

    /// A description for people; never contains a secret.
    public var description: String {
        switch self {
        case .keyring: "sealed with a key held by the Secret Service"
        case .passphrase: "sealed with a passphrase-derived key (Argon2id)"
        case .keyFile: "sealed with a key file"
        case .memoryOnly: "in memory only, never written"
        case .plaintextFile: "not sealed: plaintext JSON in a file (the other tools' format), readable by any process of yours"
        case .keyringItem:
            "not sealed: JSON in a keyring item (the other tools' format), readable by any process of yours while the keyring is unlocked"
        }
    }
}
