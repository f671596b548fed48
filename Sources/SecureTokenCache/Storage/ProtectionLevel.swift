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

    /// A description for people; never contains a secret.
    public var description: String {
        switch self {
        case .keyring: "sealed with a key held by the Secret Service"
        case .passphrase: "sealed with a passphrase-derived key (Argon2id)"
        case .keyFile: "sealed with a key file"
        case .memoryOnly: "in memory only, never written"
        }
    }
}
