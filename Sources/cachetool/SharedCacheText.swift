import SecureTokenCache

/// What cachetool says about another tool's shared cache (``MSALSharedCache``): whose it is,
/// the options that open it, and what the user can do about a cache that cannot be sealed.
enum SharedCacheText {
    /// The tools that keep their sign-in in a shared cache, and how each signs out. Presets and
    /// their `.cae` and legacy variants are recognised by the preset name they start with.
    static let tools: [(prefix: String, name: String, signOut: String)] = [
        (
            "azure-identity-dotnet", "Azure PowerShell and the .NET apps using Azure.Identity",
            "Disconnect-AzAccount in Azure PowerShell"
        ),
        ("azure-identity", "the Python, JavaScript and Java apps using azure-identity", "sign out in the app that signed in"),
        ("azure-cli", "Azure CLI", "az logout"),
    ]

    /// The tools that use `cache`, for sentences ("... signs Azure CLI out").
    static func toolName(_ cache: MSALSharedCache) -> String {
        tools.first { cache.name.hasPrefix($0.prefix) }?.name ?? "the tool that uses it"
    }

    /// How a person signs the tools of `cache` out.
    static func signOut(_ cache: MSALSharedCache) -> String {
        tools.first { cache.name.hasPrefix($0.prefix) }?.signOut ?? "sign out in the tool that signed in"
    }

    /// The cache, for sentences: a preset's name, or where a cache described by options is.
    static func label(_ cache: MSALSharedCache) -> String {
        guard cache.name == "custom" else { return cache.name }
        return switch cache.location {
        case .file(let path): "the MSAL file \(path)"
        case .keyring(let item): "the keyring item of schema \(item.schema)"
        }
    }

    /// The failure for a shared cache that does not exist: nothing is created by a read.
    static func notFound(_ cache: MSALSharedCache) -> CommandFailure {
        let what =
            switch cache.location {
            case .file(let path): "no file \(path)"
            case .keyring(let item): "no keyring item of schema \(item.schema) with signal file \(item.signalFile)"
            }
        let named = cache.name == "custom" ? "" : " " + cache.name
        return CommandFailure(
            .notFound,
            "there is no shared cache\(named) (\(what)); nothing was created. Sign in with \(toolName(cache)) first, or see 'cachetool discover'"
        )
    }

    /// The `cachetool` options that open `cache`: `--store <preset>` when it is a preset as the
    /// preset makes it, else the options that describe it.
    static func options(_ cache: MSALSharedCache) -> [String] {
        if MSALSharedCache.presetNames.contains(cache.name), (try? MSALSharedCache.preset(named: cache.name)) == cache {
            return ["--store", cache.name]
        }
        var options: [String]
        let defaultLock: String
        switch cache.location {
        case .file(let path):
            options = ["--store", "msal-file", "--path", path]
            defaultLock = path + ".lockfile"
        case .keyring(let item):
            options = ["--store", "msal-keyring", "--schema", item.schema]
            for (key, value) in item.attributes.sorted(by: { $0.key < $1.key }) { options += ["--attribute", key + "=" + value] }
            if item.label != "MSALCache" { options += ["--label", item.label] }
            if item.collection != "default" { options += ["--collection", item.collection] }
            if item.encoding != .raw { options += ["--encoding", item.encoding.rawValue] }
            if !item.matchesSchemaName { options.append("--no-match-schema-name") }
            let home = Console.environment("HOME") ?? ""
            if item.signalFile != home + "/.IdentityService/" + item.schema { options += ["--signal-file", item.signalFile] }
            defaultLock = item.signalFile + ".lockfile"
        }
        if cache.lockFile != defaultLock { options += ["--lock-file", cache.lockFile] }
        return options
    }

    /// `arguments` as one shell command line, each quoted when the shell would split or expand it.
    static func commandLine(_ arguments: [String]) -> String {
        arguments.map { argument in
            let plain =
                !argument.isEmpty
                && argument.utf8.allSatisfy { byte in
                    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                        || "-_./=:@,+%".utf8.contains(byte)
                }
            return plain
                ? argument
                : "'" + argument.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
        }.joined(separator: " ")
    }

    /// What the user can do about a cache that is not sealed, one sentence each, for `status`,
    /// `doctor` and their `--json`.
    static func advice(_ cache: MSALSharedCache) -> [String] {
        let open = commandLine(options(cache))
        let from = commandLine(["--from-store"] + options(cache).dropFirst())
        let tool = toolName(cache)
        var advice = [
            "to keep these tokens sealed, move them into a group of your own: `cachetool move \(from) --to-store auto` (this empties the cache and signs \(tool) out)",
            "to copy them and leave \(tool) signed in: `cachetool export - --include-secrets \(open) | cachetool import -` (the plaintext copy stays)",
            "when you no longer need \(tool) signed in: \(signOut(cache)), or `cachetool clear --all \(open)`",
        ]
        if case .file = cache.location {
            advice.append("meanwhile keep the file mode 0600, and out of backups, synced and shared folders")
        }
        return advice
    }
}
