internal import CLibsecret
import Synchronization

/// The libsecret binding: secrets in one Secret Service collection (the default one unless told
/// otherwise), addressed by the attributes of one ``KeyringSchema``.
///
/// Guarantees:
/// - Only the `…v…` libsecret calls are used: binary secrets for this library's own items, text
///   secrets for the items other tools share; every `GError` is copied into a
///   ``TokenCacheError`` and freed.
/// - Attributes are validated in Swift before libsecret sees them (libsecret would fail silently).
/// - Before a lookup, store or clear, the bus, the Secret Service and the client's collection are
///   probed, so that `nil` from a lookup means "no such item" and never "locked" or "no service".
/// - Every D-Bus round trip has a time limit (``KeyringOptions``): the bus probes pass an explicit
///   GDBus timeout; libsecret calls run under a ``KeyringDeadline`` that cancels them.
/// - No prompt is shown unless ``KeyringOptions/allowInteraction`` is set.
final class KeyringClient: Sendable {
    /// The schema every item of this client belongs to.
    let schema: KeyringSchema
    /// Time limits and interaction policy.
    let options: KeyringOptions
    /// The alias of the collection new items are stored in, and whose lock state is checked
    /// (`default`, `session`, ...). Lookups search every collection.
    let collection: String
    /// The private probe connection, made on first use and dropped when the bus goes away.
    private let probeBus = Mutex<SessionBusConnection?>(nil)

    /// A client for items of `schema` in `collection`.
    init(schema: KeyringSchema = .group, options: KeyringOptions = KeyringOptions(), collection: String = "default") {
        self.schema = schema
        self.options = options
        self.collection = collection
    }

    // MARK: Availability

    /// Probes the session bus for a Secret Service without touching libsecret.
    ///
    /// - Parameter address: the bus to probe; `nil` means `DBUS_SESSION_BUS_ADDRESS`.
    /// - Throws: ``TokenCacheError/Code/noSessionBus`` or
    ///   ``TokenCacheError/Code/secretServiceUnavailable`` or ``TokenCacheError/Code/keyringTimeout``.
    static func probe(busAddress address: String?, timeout: Duration) throws {
        guard let address = address ?? SessionBusConnection.environmentAddress() else {
            throw TokenCacheError(
                .noSessionBus,
                "DBUS_SESSION_BUS_ADDRESS is not set: \(TokenCacheError.advice(for: .noSessionBus))"
            )
        }
        try SessionBusConnection(address: address, timeout: timeout).requireSecretService()
    }

    /// The private probe connection to the process's session bus.
    private func bus() throws -> SessionBusConnection {
        if let bus = probeBus.withLock({ $0 }) { return bus }
        guard let address = SessionBusConnection.environmentAddress() else {
            throw TokenCacheError(
                .noSessionBus,
                "DBUS_SESSION_BUS_ADDRESS is not set: \(TokenCacheError.advice(for: .noSessionBus))"
            )
        }
        let bus = try SessionBusConnection(address: address, timeout: options.probeTimeout)
        probeBus.withLock { $0 = bus }
        return bus
    }

    /// Probes bus and service, then returns the client's collection (fresh), or throws
    /// ``TokenCacheError/Code/secretServiceUnavailable`` if the service has none.
    private func reachCollection() throws -> (SecretServiceHandle, SecretCollectionHandle) {
        do {
            try bus().requireSecretService()
        } catch let error as TokenCacheError where error.code == .noSessionBus {
            probeBus.withLock { $0 = nil }
            throw error
        }
        let service: SecretServiceHandle
        let found: SecretCollectionHandle?
        do {
            service = try SecretServiceHandle(timeout: options.callTimeout)
            found = try service.collection(collection, timeout: options.callTimeout)
        } catch let error as TokenCacheError where error.code == .secretServiceUnavailable {
            // libsecret's shared proxy talks to the service's unique bus name, which it only
            // updates from signals this process never dispatches: after the daemon was replaced
            // it would keep calling the old one. Drop it so the next call reconnects.
            Self.forgetServiceConnection()
            throw error
        }
        guard let found else {
            throw TokenCacheError(
                .secretServiceUnavailable,
                "the Secret Service has no \(collection) collection: \(TokenCacheError.advice(for: .secretServiceUnavailable))"
            )
        }
        return (service, found)
    }

    /// Drops libsecret's shared `SecretService` of this process; the next call connects afresh
    /// (after the keyring daemon was restarted or replaced).
    static func forgetServiceConnection() {
        secret_service_disconnect()
    }

    /// Whether the client's collection (the default one unless the client was made for another)
    /// is locked now.
    func isDefaultCollectionLocked() throws -> Bool {
        try reachCollection().1.isLocked
    }

    /// Makes sure the bus, the service and the client's collection, unlocked, are there.
    ///
    /// A locked collection is unlocked with a prompt when ``KeyringOptions/allowInteraction`` is
    /// set; otherwise it is reported as ``TokenCacheError/Code/collectionLocked``.
    func requireUnlocked() throws {
        let (service, collection) = try reachCollection()
        guard collection.isLocked else { return }
        guard options.allowInteraction else { throw Self.lockedError() }
        try unlock(service: service, collection: collection, allowInteraction: true)
    }

    /// Unlocks the default collection.
    ///
    /// Without interaction this asks the service to unlock without a prompt (the Secret Service
    /// `Unlock` call on a private connection); if the service needs a prompt, the prompt is
    /// dismissed, never shown, and ``TokenCacheError/Code/interactionNotAllowed`` is thrown.
    func unlockDefaultCollection(allowInteraction: Bool) throws {
        let (service, collection) = try reachCollection()
        guard collection.isLocked else { return }
        try unlock(service: service, collection: collection, allowInteraction: allowInteraction)
    }

    private func unlock(service: SecretServiceHandle, collection: SecretCollectionHandle, allowInteraction: Bool) throws {
        if allowInteraction {
            try service.unlockShowingPrompt(collection, timeout: options.interactionTimeout)
        } else {
            let bus = try bus()
            let path = collection.objectPath
            let parameters = path.withCString { pathChars in
                var paths: [UnsafePointer<CChar>?] = [pathChars]
                return CLibsecret_variant_new_object_path_array_tuple(&paths, 1)
            }
            guard let parameters else {
                throw TokenCacheError(.keyringFailure, "the Secret Service gave an invalid collection path")
            }
            let reply = try bus.call(
                "asking the Secret Service to unlock the collection",
                destination: SessionBusConnection.secretServiceName, path: "/org/freedesktop/secrets",
                interface: "org.freedesktop.Secret.Service", method: "Unlock",
                parameters: parameters, replyType: "(aoo)"
            )
            var count = 0
            let promptChars = CLibsecret_variant_get_objects_and_prompt(reply.pointer, &count)
            let prompt = promptChars.map { String(cString: $0) } ?? "/"
            g_free(promptChars)
            if prompt != "/" {
                // Dismiss the prompt object so the service does not keep it around; no UI was shown.
                _ = try? bus.call(
                    "dismissing the unlock prompt", destination: SessionBusConnection.secretServiceName,
                    path: prompt, interface: "org.freedesktop.Secret.Prompt", method: "Dismiss",
                    parameters: nil, replyType: "()"
                )
                throw TokenCacheError(
                    .interactionNotAllowed,
                    "unlocking the keyring collection needs a prompt: \(TokenCacheError.advice(for: .interactionNotAllowed))"
                )
            }
        }
        if try isDefaultCollectionLocked() {
            throw TokenCacheError(
                .collectionLocked, "the keyring collection is still locked: the unlock was refused or dismissed")
        }
    }

    /// Locks the default collection through the Secret Service `Lock` call (tests, sign-out tools).
    func lockDefaultCollection() throws {
        let (service, collection) = try reachCollection()
        try service.lock(collection, timeout: options.callTimeout)
    }

    private static func lockedError() -> TokenCacheError {
        TokenCacheError(.collectionLocked, "the keyring collection is locked: \(TokenCacheError.advice(for: .collectionLocked))")
    }

    /// Runs one libsecret item call; if it fails, asks whether the collection got locked meanwhile
    /// (libsecret would then have tried a prompt and been cancelled) and reports that instead.
    private func itemCall<R>(_ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch let error as TokenCacheError {
            if error.code == .secretServiceUnavailable { Self.forgetServiceConnection() }
            if error.code != .collectionLocked, (try? isDefaultCollectionLocked()) == true {
                throw Self.lockedError()
            }
            throw error
        }
    }

    // MARK: Items

    /// Stores (or replaces) the binary secret of the item with exactly these attributes.
    ///
    /// The bytes are copied into libsecret's non-pageable memory, which it wipes on release.
    /// - Parameter label: shown in keyring tools and readable while the collection is locked:
    ///   never put a user name, tenant, client or account id in it.
    func store(_ secret: UnsafeRawBufferPointer, label: String, attributes: [String: String]) throws {
        try schema.validate(attributes, complete: true)
        guard !label.isEmpty, !label.utf8.contains(0) else {
            throw TokenCacheError(.invalidArgument, "an item label must be non-empty and free of NUL characters")
        }
        try requireUnlocked()
        try itemCall {
            let stored = try schema.withAttributeTable(attributes) { table in
                let value = CLibsecret_value_new_binary(secret.baseAddress, secret.count)
                defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
                return try KeyringDeadline.run("storing a keyring item", timeout: options.callTimeout) { cancellable, error in
                    secret_password_storev_binary_sync(schema.pointer, table, "default", label, value, cancellable, error)
                }
            }
            // FALSE without a GError: a libsecret precondition failed (it printed a CRITICAL).
            guard stored != 0 else {
                throw TokenCacheError(.keyringFailure, "libsecret refused to store the item (see its log on stderr)")
            }
        }
    }

    /// Looks up the item with exactly these attributes and passes its secret to `body` without
    /// copying it into Swift-managed memory. Returns `nil` when there is no such item (the
    /// collection is known to be unlocked at that point, so `nil` never means "locked").
    func withSecret<R: ~Copyable>(attributes: [String: String], _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try schema.validate(attributes, complete: true)
        try requireUnlocked()
        return try withSecretAfterLockCheck(attributes: attributes, body)
    }

    /// The lookup of ``withSecret(attributes:_:)`` without its lock check first; internal so a
    /// test can show what happens when the collection is locked between the check and the call.
    func withSecretAfterLockCheck<R: ~Copyable>(
        attributes: [String: String],
        _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        try schema.validate(attributes, complete: true)
        let value = try itemCall {
            try schema.withAttributeTable(attributes) { table in
                options.allowInteraction ? try lookupPrompting(table) : try lookupWithoutPrompt(table)
            }
        }
        guard let value else { return nil }
        defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
        var length = 0
        let bytes = CLibsecret_value_bytes(value, &length)
        return try body(UnsafeRawBufferPointer(start: bytes, count: length))
    }

    /// `secret_password_lookupv_binary_sync`: unlocks a locked item, with a prompt if the service
    /// needs one. Only when the caller allowed interaction.
    private func lookupPrompting(_ table: OpaquePointer) throws -> OpaquePointer? {
        try KeyringDeadline.run("looking up a keyring item", timeout: options.interactionTimeout) { cancellable, error in
            secret_password_lookupv_binary_sync(schema.pointer, table, cancellable, error)
        }
    }

    /// A lookup that can never show a prompt: a search without `SECRET_SEARCH_UNLOCK` returns a
    /// locked item without its secret instead of unlocking it (which the lookup call would do if
    /// the collection got locked after the check). First match only, secrets loaded in the same
    /// round trip.
    private func lookupWithoutPrompt(_ table: OpaquePointer) throws -> OpaquePointer? {
        let list = try KeyringDeadline.run("looking up a keyring item", timeout: options.callTimeout) { cancellable, error in
            secret_password_searchv_sync(schema.pointer, table, SECRET_SEARCH_LOAD_SECRETS, cancellable, error)
        }
        guard let list else { return nil }
        defer { g_list_free_full(list, CLibsecret_object_unref) }
        guard let found = list.pointee.data else { return nil }
        guard let item = CLibsecret_as_item(found) else {
            // Not a D-Bus item (libsecret's file backend): its secret is read without prompts.
            return try KeyringDeadline.run("reading a keyring item", timeout: options.callTimeout) { cancellable, error in
                secret_retrievable_retrieve_secret_sync(OpaquePointer(found), cancellable, error)
            }
        }
        if secret_item_get_locked(item) != 0 { throw Self.lockedError() }
        guard let value = secret_item_get_secret(item) else {
            throw TokenCacheError(.keyringFailure, "the Secret Service returned an unlocked item without its secret")
        }
        return value
    }

    /// Stores (or replaces) the item with exactly these attributes, holding `text` as a text
    /// secret (content type `text/plain`), in the client's collection: libsecret's password
    /// call, the one the other tools' extensions use, so that their password lookups read it.
    /// - Parameter label: shown in keyring tools and readable while the collection is locked.
    func storeText(_ text: String, label: String, attributes: [String: String]) throws {
        try schema.validate(attributes, complete: true)
        guard !label.isEmpty, !label.utf8.contains(0) else {
            throw TokenCacheError(.invalidArgument, "an item label must be non-empty and free of NUL characters")
        }
        guard !text.utf8.contains(0) else {
            throw TokenCacheError(.invalidArgument, "a text secret must be free of NUL characters")
        }
        try requireUnlocked()
        try itemCall {
            let stored = try schema.withAttributeTable(attributes) { table in
                try KeyringDeadline.run("storing a keyring item", timeout: options.callTimeout) { cancellable, error in
                    secret_password_storev_sync(schema.pointer, table, collection, label, text, cancellable, error)
                }
            }
            // FALSE without a GError: a libsecret precondition failed (it printed a CRITICAL).
            guard stored != 0 else {
                throw TokenCacheError(.keyringFailure, "libsecret refused to store the item (see its log on stderr)")
            }
        }
    }

    /// Deletes the item with exactly these attributes. Returns whether there was one.
    @discardableResult
    func clear(attributes: [String: String]) throws -> Bool {
        try schema.validate(attributes, complete: true)
        try requireUnlocked()
        return try itemCall {
            try schema.withAttributeTable(attributes) { table in
                try KeyringDeadline.run("deleting a keyring item", timeout: options.callTimeout) { cancellable, error in
                    secret_password_clearv_sync(schema.pointer, table, cancellable, error)
                }
            } != 0
        }
    }

    /// The number of items of this schema matching `attributes` (a subset of the schema's).
    ///
    /// Searches without unlocking and without reading secrets, so it works on a locked
    /// collection: item attributes are public to every process of the user.
    func count(matching attributes: [String: String]) throws -> Int {
        try schema.validate(attributes, complete: false)
        try bus().requireSecretService()
        let list = try schema.withAttributeTable(attributes) { table in
            try KeyringDeadline.run("searching keyring items", timeout: options.callTimeout) { cancellable, error in
                secret_password_searchv_sync(schema.pointer, table, SECRET_SEARCH_ALL, cancellable, error)
            }
        }
        guard let list else { return 0 }
        defer { g_list_free_full(list, CLibsecret_object_unref) }
        return Int(g_list_length(list))
    }
}
