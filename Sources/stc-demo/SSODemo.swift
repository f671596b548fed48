import ArgumentParser
import SecureTokenCache

/// `stc-demo`: one app of a group of apps, run as a process per step, to show single sign-on
/// across processes against a (fake) authority.
@main
struct SSODemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stc-demo",
        abstract: "One app of a shared-cache group: sign in, get tokens silently, sign out.",
        discussion: """
            Run it as several processes with different --client ids over one --group to see single
            sign-on: what one app signs in to, the apps of its family get silently. Tokens are never
            printed, only a short fingerprint. Exit status: 0 done, 2 interaction required, 1 any
            other failure.
            """,
        subcommands: [SignIn.self, Token.self, SignOut.self, Accounts.self, Wipe.self, Walkthrough.self]
    )
}
