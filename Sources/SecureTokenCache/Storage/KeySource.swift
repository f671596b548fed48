/// How a group's key is found again, as recorded in the group's header.
enum KeySource: Sendable, Hashable {
    /// Derived with Argon2id from a passphrase, with this salt and these limits.
    case passphrase(salt: [UInt8], parameters: Argon2idParameters)
    /// Read from a key file (the header does not say which: the caller names it).
    case keyFile
    /// Held by the Secret Service (the keyring provider stores it under the group's id).
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
