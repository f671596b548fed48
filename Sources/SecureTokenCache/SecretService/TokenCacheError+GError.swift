internal import CLibsecret

extension TokenCacheError {
    /// Converts a `GError` from libsecret or GDBus into a ``TokenCacheError`` and frees it.
    ///
    /// The `GError` is copied into ``Underlying/gError(domain:code:message:)`` first; the code is
    /// chosen from its domain so that "no bus", "no Secret Service", "locked" and "timeout" stay
    /// distinct outcomes instead of one generic failure.
    init(consuming error: UnsafeMutablePointer<GError>, operation: String) {
        defer { g_error_free(error) }
        let domain = error.pointee.domain
        let code = error.pointee.code
        let message = error.pointee.message.map { String(cString: $0) } ?? ""
        let underlying = Underlying.gError(
            domain: String(cString: g_quark_to_string(domain)),
            code: code,
            message: message
        )
        var remoteName: String?
        if g_dbus_error_is_remote_error(error) != 0, let name = g_dbus_error_get_remote_error(error) {
            remoteName = String(cString: name)
            g_free(name)
        }
        let kind = Self.keyringCode(domain: domain, code: code, remoteName: remoteName)
        self.init(kind, "\(operation) failed: \(Self.advice(for: kind))", underlying: underlying)
    }

    /// The code for a GError from a Secret Service call.
    private static func keyringCode(domain: GQuark, code: Int32, remoteName: String?) -> Code {
        switch remoteName {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            return .secretServiceUnavailable
        case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout",
            "org.freedesktop.DBus.Error.TimedOut":
            return .keyringTimeout
        case "org.freedesktop.Secret.Error.IsLocked":
            return .collectionLocked
        case "org.freedesktop.Secret.Error.NoSuchObject", "org.freedesktop.DBus.Error.UnknownObject",
            "org.freedesktop.DBus.Error.UnknownMethod":
            // gnome-keyring started without a login keyring answers "Object does not exist at
            // path /org/freedesktop/secrets/collection/login": there is no usable collection.
            return .secretServiceUnavailable
        default:
            break
        }
        if domain == secret_error_get_quark() {
            return code == Int32(SECRET_ERROR_IS_LOCKED.rawValue) ? .collectionLocked : .keyringFailure
        }
        if domain == g_dbus_error_quark() {
            switch UInt32(code) {
            case G_DBUS_ERROR_SERVICE_UNKNOWN.rawValue, G_DBUS_ERROR_NAME_HAS_NO_OWNER.rawValue,
                G_DBUS_ERROR_SPAWN_SERVICE_NOT_FOUND.rawValue, G_DBUS_ERROR_SPAWN_EXEC_FAILED.rawValue,
                G_DBUS_ERROR_SPAWN_CHILD_EXITED.rawValue, G_DBUS_ERROR_SPAWN_FAILED.rawValue,
                G_DBUS_ERROR_UNKNOWN_OBJECT.rawValue, G_DBUS_ERROR_UNKNOWN_METHOD.rawValue:
                return .secretServiceUnavailable
            case G_DBUS_ERROR_NO_REPLY.rawValue, G_DBUS_ERROR_TIMEOUT.rawValue, G_DBUS_ERROR_TIMED_OUT.rawValue:
                return .keyringTimeout
            case G_DBUS_ERROR_NO_SERVER.rawValue, G_DBUS_ERROR_DISCONNECTED.rawValue,
                G_DBUS_ERROR_BAD_ADDRESS.rawValue, G_DBUS_ERROR_NO_NETWORK.rawValue:
                return .noSessionBus
            default:
                return .keyringFailure
            }
        }
        if domain == g_io_error_quark() {
            switch UInt32(code) {
            case G_IO_ERROR_TIMED_OUT.rawValue, G_IO_ERROR_CANCELLED.rawValue:
                return .keyringTimeout
            case G_IO_ERROR_DBUS_ERROR.rawValue:
                return .keyringFailure
            default:
                // "Could not connect: No such file or directory", "Connection refused",
                // "Cannot autolaunch D-Bus without X11 $DISPLAY", a closed connection.
                return .noSessionBus
            }
        }
        return .keyringFailure
    }

    /// What a person can do about a failure of the given kind.
    static func advice(for code: Code) -> String {
        switch code {
        case .noSessionBus:
            "no D-Bus session bus is reachable; run inside a desktop session (DBUS_SESSION_BUS_ADDRESS) or use the file store"
        case .secretServiceUnavailable:
            "no Secret Service (org.freedesktop.secrets) with a default collection is on the session bus; start gnome-keyring or KWallet, or use the file store"
        case .collectionLocked:
            "the keyring collection is locked; unlock it (or allow interaction) and retry; nothing was lost"
        case .interactionNotAllowed:
            "unlocking the keyring needs a prompt, but interaction was not allowed"
        case .keyringTimeout:
            "the Secret Service did not answer in time; retry, or check that the keyring daemon is responsive"
        default:
            "the Secret Service reported an error"
        }
    }
}
