public import Testing

/// What a test needs beyond the process it runs in, so that `scripts/test --fast` can leave out
/// what is slow or needs the environment `scripts/with-keyring` makes (`swift test --skip
/// tag:keyring`).
extension Tag {
    /// Needs the private Secret Service of `scripts/with-keyring`; with `STC_KEYRING_REQUIRED=1`
    /// it fails, never skips, when the keyring is missing.
    @Tag public static var keyring: Self

    /// Starts other processes that share a group, a lock or an authority with the test, and
    /// waits on them.
    @Tag public static var multiProcess: Self

    /// Takes seconds rather than milliseconds: scale, fault injection at every byte, real
    /// interpreters.
    @Tag public static var slow: Self

    /// Needs the private PostgreSQL server of `scripts/postgres run` (which `scripts/test` starts);
    /// with `STC_POSTGRES_REQUIRED=1` it fails, never skips, when the server is missing.
    @Tag public static var postgres: Self
}
