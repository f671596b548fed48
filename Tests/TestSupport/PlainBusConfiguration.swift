/// The configuration of a plain session bus for tests: it listens in a folder of the test's,
/// lets every client talk to every other, and has no service activation, so nothing on it can
/// start gnome-keyring on demand as the stock session configuration would. What a bus without
/// a Secret Service is made of (`dbus-daemon --config-file` or `dbus-run-session --config-file`).
public enum PlainBusConfiguration {
    /// The configuration's text, for a bus whose socket is made in `folder`.
    public static func text(listeningIn folder: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:dir=\(folder)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """
    }
}
