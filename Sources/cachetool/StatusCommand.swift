import ArgumentParser
import SecureTokenCache

/// `cachetool status`: what the group is, where, what protects it, and what it holds.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show where a group lives, what protects it and what it holds.",
        discussion: """
            Prints the store the group is in and why it was chosen, its protection at rest \
            (keyring, passphrase, key file, memory only), its location, its generation (bumped \
            by every write of any process), the number of entries of each kind, the accounts and \
            client ids it holds, how many access tokens have expired, and its size on disk.

            For another tool's shared cache (--store msal-file, msal-keyring or a preset) it \
            says that the tokens are not sealed (plaintext JSON in a file, or a keyring item any \
            process of yours can read), that the format is the other tools' and cannot be \
            sealed, and what you can do about it.

            EXAMPLES
              cachetool status
              cachetool status --store azure-cli
              cachetool status --store file --dir /srv/tokens --key-file /etc/tokens.key --json
            """
    )

    @Flag(help: "Print JSON with the same values.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let configuration = try global.configuration()
        let group = try global.openExisting(configuration)
        let statistics = try group.statistics()
        let store = group.storeDescription
        let size = store.kind == .file || store.kind == .msalFile ? FileAccess.diskUsage(store.location) : nil
        let shared = configuration.sharedCache
        let total = statistics.countByKind.values.reduce(0, +)
        let kinds = CredentialKind.allCases.sorted()

        if json {
            var counts = JSONObject()
            for kind in kinds { counts[kind.rawValue] = .integer(statistics.countByKind[kind] ?? 0) }
            var object: JSONObject = [
                "group": .string(group.name),
                "store": .string(store.kind.rawValue),
                "reason": .string(store.reason),
                "protection": .string(store.protection.rawValue),
                "protectionDescription": .string(store.protection.description),
                "location": .string(store.location),
                "coordination": store.coordinationDirectory.map { .string($0) } ?? .null,
                "warnings": .array(store.warnings.map(JSONValue.string)),
                "generation": .integer(statistics.generation),
                "entries": .integer(total),
                "entriesByKind": .object(counts),
                "accounts": .integer(statistics.accounts),
                "clients": .array(statistics.clients.map(JSONValue.string)),
                "expiredAccessTokens": .integer(statistics.expiredAccessTokens),
                "sizeOnDisk": size.map { .integer($0) } ?? .null,
            ]
            if let shared {
                object["sharedCache"] = .object([
                    "name": .string(shared.name),
                    "tools": .string(SharedCacheText.toolName(shared)),
                    "sealed": .bool(false),
                    "format": .string("MSAL JSON document, the other tools' format, which cannot be sealed"),
                    "lockFile": .string(shared.lockFile),
                    "advice": .array(SharedCacheText.advice(shared).map(JSONValue.string)),
                ])
            }
            Console.line(JSONWriter.text(.object(object), style: .pretty))
            return
        }
        let byKind = kinds.map { "\(statistics.countByKind[$0] ?? 0) \($0.rawValue)" }.joined(separator: ", ")
        var lines: [(String, String)] = [
            ("Group", group.name),
            ("Store", "\(store.kind.rawValue) (\(store.reason))"),
            ("Protection", "\(store.protection.rawValue): \(store.protection.description)"),
            ("Location", store.location),
            ("Generation", String(statistics.generation)),
            ("Entries", "\(total) (\(byKind))"),
            ("Accounts", String(statistics.accounts)),
            (
                "Clients",
                statistics.clients.isEmpty ? "0" : "\(statistics.clients.count): \(statistics.clients.joined(separator: ", "))"
            ),
            ("Expired", "\(statistics.expiredAccessTokens) access tokens"),
            ("Size on disk", size.map { "\($0) bytes" } ?? "-"),
        ]
        if let coordination = store.coordinationDirectory { lines.insert(("Coordination", coordination), at: 4) }
        lines += store.warnings.map { ("Warning", $0) }
        if let shared {
            lines.insert(("Shared with", SharedCacheText.toolName(shared)), at: 2)
            lines += SharedCacheText.advice(shared).map { ("Advice", $0) }
        }
        Console.out(KeyValueText.render(lines))
    }
}

/// Aligned "Name  value" lines, as `status`, `show` and `doctor` print them.
enum KeyValueText {
    static func render(_ lines: [(String, String)], indent: String = "") -> String {
        let width = lines.map(\.0.count).max() ?? 0
        return lines.map { "\(indent)\($0.0):\(String(repeating: " ", count: width - $0.0.count + 2))\($0.1)\n" }.joined()
    }
}
