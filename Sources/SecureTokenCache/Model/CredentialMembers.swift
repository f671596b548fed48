/// The members every credential (``AccessToken``, ``RefreshToken``, ``IdToken``) has, parsed
/// once with the rest of the entry's ``ParsedMembers``.
struct CredentialMembers: Sendable {
    /// `secret`, `""` when missing.
    let secret: String
    /// `home_account_id`, `nil` when missing or empty (an app-only token).
    let homeAccountId: HomeAccountId?
    /// `environment`.
    let environment: Environment
    /// `client_id`, `""` when missing.
    let clientId: String

    /// Reads the credential members `parts` picked out.
    init(_ parts: borrowing EntryParts) {
        secret = parts.string(.secret) ?? ""
        homeAccountId = parts.credentialHomeAccountId()
        environment = parts.environment()
        clientId = parts.string(.clientId) ?? ""
    }
}
