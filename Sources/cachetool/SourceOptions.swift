import ArgumentParser
import SecureTokenCache

/// `--from FILE`: read entries from an MSAL JSON cache file instead of a group, for looking
/// into another SDK's cache (Azure CLI's `~/.azure/msal_token_cache.json`, say) without
/// importing it.
struct SourceOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Read this MSAL JSON cache file (- for standard input) instead of the group; nothing is imported.",
            valueName: "file"))
    var from: String?

    /// The group to read: the file's contents in a private in-memory group, else the group
    /// `global` names.
    func open(_ global: GlobalOptions) throws -> CacheGroup {
        guard let from else { return try global.openExisting() }
        let group = CacheGroup(inMemory: "cachetool.from-file")
        try group.importMSAL(try FileAccess.read(from))
        return group
    }

    /// What was read, for messages: "group NAME", or the file.
    func describe(_ group: CacheGroup) -> String {
        guard let from else { return "group \(group.name)" }
        return from == "-" ? "standard input" : from
    }
}
