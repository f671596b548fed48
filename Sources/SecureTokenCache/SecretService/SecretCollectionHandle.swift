internal import CLibsecret

/// One reference to a libsecret `SecretCollection` proxy, dropped on `deinit`.
///
/// The proxy is made fresh for each check (no `SECRET_SERVICE_LOAD_COLLECTIONS`), so its `Locked`
/// property is what the service said just now: cached proxies only learn of changes through
/// signals, which a process without a running GLib main loop never dispatches.
final class SecretCollectionHandle: @unchecked Sendable {
    /// The `SecretCollection *`, owned.
    let pointer: UnsafeMutablePointer<SecretCollection>

    /// Takes ownership of one reference.
    init(taking pointer: UnsafeMutablePointer<SecretCollection>) {
        self.pointer = pointer
    }

    deinit { CLibsecret_object_unref(pointer) }

    /// The collection's `Locked` property when the proxy was made.
    var isLocked: Bool { secret_collection_get_locked(pointer) != 0 }

    /// The collection's D-Bus object path.
    var objectPath: String { String(cString: CLibsecret_collection_object_path(pointer)) }

    /// Runs `body` with a one-element `GList` holding this collection (for lock and unlock).
    func withSingletonList<R>(_ body: (UnsafeMutablePointer<GList>) throws -> R) rethrows -> R {
        let list = g_list_append(nil, UnsafeMutableRawPointer(pointer))!
        defer { g_list_free(list) }
        return try body(list)
    }
}
