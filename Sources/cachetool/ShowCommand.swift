import ArgumentParser
import SecureTokenCache

/// `cachetool show ID`: one entry in full; the secret only with `--reveal`.
struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show one entry in full.",
        discussion: """
            ID is an entry's id from `cachetool list` (such as at-3f2a9c1b0e4d), a unique \
            prefix of it of at least 6 characters, or the entry's full MSAL cache key. Prints \
            the entry's summary and every stored field. The secret (the token itself) is shown \
            as a fingerprint unless --reveal is given; treat revealed output as a password.

            Exits with status 3 when no entry has that id.

            EXAMPLES
              cachetool show at-3f2a9c1b0e4d
              cachetool show rt-91c0 --reveal --json | jq -r .fields.secret
            """
    )

    @Argument(help: ArgumentHelp("The entry's id, an unambiguous prefix of it, or its MSAL key.", valueName: "id"))
    var id: String

    @Flag(help: "Print the secret (the token) too.")
    var reveal = false

    @Flag(help: "Print JSON with the same values.")
    var json = false

    @OptionGroup var source: SourceOptions
    @OptionGroup var global: GlobalOptions

    func run() throws {
        let group = try source.open(global)
        guard let entry = try group.entry(id: id) else {
            throw CommandFailure(.notFound, "no entry with id \(id) in \(source.describe(group)); see 'cachetool list all'")
        }
        let view = EntryView(entry: entry, now: Console.now)
        var fields = entry.fields
        let hasSecret = fields["secret"] != nil
        if !reveal { fields["secret"] = nil }
        if reveal, hasSecret { Console.note("the output contains a secret") }

        if json {
            guard case .object(var object) = view.entryJSON else { return }
            object["fields"] = .object(fields)
            Console.line(JSONWriter.text(.object(object), style: .pretty))
            return
        }
        var summary: [(String, String)] = [
            ("ID", entry.id),
            ("Kind", entry.kind.rawValue),
            ("Key", entry.key),
            (
                "Account",
                [entry.username, entry.homeAccountId.map { "(\($0.rawValue))" }].compactMap { $0 }.joined(separator: " ")
            ),
            ("Client", entry.clientId ?? ""),
            ("Realm", entry.realm ?? ""),
            ("Environment", entry.environment),
        ]
        if let scopes = entry.scopes { summary.append(("Scopes", scopes.values.joined(separator: " "))) }
        if let expiresOn = entry.expiresOn { summary.append(("Expires", "\(TimeText.utc(expiresOn)) (\(view.expiresInText))")) }
        if let family = entry.familyId { summary.append(("Family", family.isEmpty ? "none (known not in a family)" : family)) }
        if let fingerprint = entry.secretFingerprint {
            summary.append(
                ("Secret", reveal ? "fingerprint \(fingerprint), shown below" : "fingerprint \(fingerprint) (--reveal prints it)")
            )
        }
        Console.out(KeyValueText.render(summary.map { ($0.0, $0.1.isEmpty ? "-" : $0.1) }))
        Console.line()
        Console.line("Stored fields:")
        var stored: [(String, String)] = []
        for (name, value) in entry.fields {
            if name == "secret", !reveal {
                stored.append((name, "<hidden; fingerprint \(entry.secretFingerprint ?? "")>"))
                continue
            }
            stored.append((name, Self.text(value)))
        }
        Console.out(KeyValueText.render(stored, indent: "  "))
    }

    /// A stored value as text: strings and numbers as they are, anything else as JSON.
    static func text(_ value: JSONValue) -> String {
        switch value {
        case .string(let string): string
        case .number(let literal): literal
        default:
            JSONWriter.text(value, style: .pretty).split(whereSeparator: \.isNewline).map { String($0).trimmingSpaces }.joined(
                separator: " ")
        }
    }
}
