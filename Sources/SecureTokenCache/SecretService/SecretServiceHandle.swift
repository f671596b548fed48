internal import CLibsecret

/// One reference to libsecret's shared `SecretService` proxy for the process's session bus,
/// dropped on `deinit`.
final class SecretServiceHandle: @unchecked Sendable {
    /// The `SecretService *`, owned.
    let pointer: UnsafeMutablePointer<SecretService>

    /// Gets (or connects) libsecret's `SecretService` under a deadline.
    init(timeout: Duration) throws {
        let service = try KeyringDeadline.run("connecting to the Secret Service", timeout: timeout) { cancellable, error in
            secret_service_get_sync(SECRET_SERVICE_NONE, cancellable, error)
        }
        guard let service else {
            throw TokenCacheError(
                .secretServiceUnavailable,
                "connecting to the Secret Service failed: \(TokenCacheError.advice(for: .secretServiceUnavailable))"
            )
        }
        pointer = service
    }

    deinit { CLibsecret_object_unref(pointer) }

    /// The collection behind the alias `alias` (`default`, which is SECRET_COLLECTION_DEFAULT,
    /// `session`, ...), as a fresh proxy, or `nil` if there is none.
    func collection(_ alias: String, timeout: Duration) throws -> SecretCollectionHandle? {
        let collection = try KeyringDeadline.run("reading the \(alias) keyring collection", timeout: timeout) {
            cancellable, error in
            secret_collection_for_alias_sync(pointer, alias, SECRET_COLLECTION_NONE, cancellable, error)
        }
        return collection.map(SecretCollectionHandle.init(taking:))
    }

    /// Locks `collection` through the Secret Service `Lock` call (never prompts).
    func lock(_ collection: SecretCollectionHandle, timeout: Duration) throws {
        _ = try collection.withSingletonList { list in
            try KeyringDeadline.run("locking the keyring collection", timeout: timeout) { cancellable, error in
                secret_service_lock_sync(pointer, list, cancellable, nil, error)
            }
        }
    }

    /// Unlocks `collection` through libsecret, which shows the service's prompt if one is needed.
    /// Only for callers that allowed interaction.
    func unlockShowingPrompt(_ collection: SecretCollectionHandle, timeout: Duration) throws {
        _ = try collection.withSingletonList { list in
            try KeyringDeadline.run("unlocking the keyring collection", timeout: timeout) { cancellable, error in
                secret_service_unlock_sync(pointer, list, cancellable, nil, error)
            }
        }
    }
}
