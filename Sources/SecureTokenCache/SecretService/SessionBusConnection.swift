internal import CLibsecret

/// A private connection to a D-Bus session bus, used to probe for the Secret Service and to make
/// the few raw calls libsecret offers no prompt-free variant of. Every call has an explicit
/// timeout (GDBus `timeout_msec`) and the connection handshake runs under a ``KeyringDeadline``.
///
/// The connection is private (not GLib's shared session-bus singleton), so its bus address can
/// be injected, and closing it does not disturb libsecret's own connection.
final class SessionBusConnection: @unchecked Sendable {
    /// The well-known bus name of the freedesktop Secret Service.
    static let secretServiceName = "org.freedesktop.secrets"

    /// `GDBusConnection *`, owned. GDBus connections are thread-safe.
    private let connection: OpaquePointer
    /// The time limit of every call on this connection.
    let timeout: Duration

    /// The session bus address from the environment, or `nil` when there is none.
    ///
    /// GLib would try to autolaunch a bus (needs X11) when the variable is unset; this package
    /// never does, and reports ``TokenCacheError/Code/noSessionBus`` instead.
    static func environmentAddress() -> String? {
        guard let raw = getenv("DBUS_SESSION_BUS_ADDRESS") else { return nil }
        let address = String(cString: raw)
        return address.isEmpty ? nil : address
    }

    /// Connects and authenticates to the bus at `address`.
    ///
    /// - Throws: ``TokenCacheError/Code/noSessionBus`` when the bus cannot be reached, or
    ///   ``TokenCacheError/Code/keyringTimeout`` when the handshake does not finish in time.
    init(address: String, timeout: Duration) throws {
        self.timeout = timeout
        let flags = GDBusConnectionFlags(
            rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
                | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue
        )
        let made: OpaquePointer?
        do {
            made = try KeyringDeadline.run("connecting to the D-Bus session bus", timeout: timeout) { cancellable, error in
                g_dbus_connection_new_for_address_sync(address, flags, nil, cancellable, error)
            }
        } catch let error as TokenCacheError where error.code != .keyringTimeout {
            // Whatever GIO says (no such socket, refused, bad address), there is no bus here.
            throw TokenCacheError(
                .noSessionBus,
                "cannot connect to the D-Bus session bus: \(TokenCacheError.advice(for: .noSessionBus))",
                underlying: error.underlying
            )
        }
        guard let made else {
            throw TokenCacheError(.noSessionBus, "cannot connect to the D-Bus session bus")
        }
        connection = made
    }

    deinit {
        // A private connection is not closed by dropping the last reference while GDBus's worker
        // thread still holds one; close it explicitly (without waiting) so no socket leaks.
        g_dbus_connection_close(connection, nil, nil, nil)
        CLibsecret_object_unref(UnsafeMutableRawPointer(connection))
    }

    /// Calls a D-Bus method with this connection's timeout and returns its reply.
    ///
    /// - Parameters:
    ///   - parameters: a floating `GVariant` tuple (consumed), or `nil`.
    ///   - replyType: the expected reply signature, e.g. `"(b)"`; GDBus checks it.
    ///   - autoStart: whether the bus may activate `destination` to answer.
    func call(
        _ operation: String,
        destination: String,
        path: String,
        interface: String,
        method: String,
        parameters: OpaquePointer?,
        replyType: String,
        autoStart: Bool = false
    ) throws -> GVariantReply {
        let flags = autoStart ? G_DBUS_CALL_FLAGS_NONE : G_DBUS_CALL_FLAGS_NO_AUTO_START
        // GDBus enforces `timeout_msec` itself; the deadline (slightly later) is a second guard.
        let reply = try replyType.withCString { typeChars in
            try KeyringDeadline.run(operation, timeout: timeout + .milliseconds(500)) { cancellable, error in
                g_dbus_connection_call_sync(
                    connection, destination, path, interface, method, parameters,
                    CLibsecret_variant_type(typeChars), flags,
                    Int32(timeout.milliseconds), cancellable, error
                )
            }
        }
        guard let reply else {
            throw TokenCacheError(.keyringFailure, "\(operation) returned no reply")
        }
        return GVariantReply(taking: reply)
    }

    /// Whether some connection owns `name` on this bus (`org.freedesktop.DBus.NameHasOwner`).
    func nameHasOwner(_ name: String) throws -> Bool {
        let reply = try call(
            "asking the bus whether \(name) has an owner",
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            method: "NameHasOwner", parameters: CLibsecret_variant_new_string_tuple(name), replyType: "(b)"
        )
        return CLibsecret_variant_get_boolean_tuple(reply.pointer) != 0
    }

    /// Whether the bus can start a service for `name` on demand (`ListActivatableNames`).
    func nameIsActivatable(_ name: String) throws -> Bool {
        let reply = try call(
            "listing the bus's activatable names",
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            method: "ListActivatableNames", parameters: nil, replyType: "(as)"
        )
        return CLibsecret_variant_string_array_tuple_contains(reply.pointer, name) != 0
    }

    /// Throws unless a Secret Service owns, or can be activated for, `org.freedesktop.secrets`.
    func requireSecretService() throws {
        if try nameHasOwner(Self.secretServiceName) { return }
        if try nameIsActivatable(Self.secretServiceName) { return }
        throw TokenCacheError(
            .secretServiceUnavailable,
            "\(Self.secretServiceName) has no owner and cannot be activated: \(TokenCacheError.advice(for: .secretServiceUnavailable))"
        )
    }
}
