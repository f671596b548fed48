import ArgumentParser

/// `cachetool`: inspect, clear, import and export SecureTokenCache groups.
@main
struct CacheTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cachetool",
        abstract: "Inspect, clear, import and export SecureTokenCache groups."
    )
}
