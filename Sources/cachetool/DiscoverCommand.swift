import ArgumentParser
import Glibc
import SecureTokenCache

/// One MSAL token cache `cachetool discover` found, or could not look into.
struct DiscoveredCache {
    enum State: String {
        /// Opened and counted.
        case found
        /// There, but it could not be opened (no key given, damaged, ...): ``DiscoveredCache/detail`` says why.
        case unreadable
        /// Not looked into: a keyring item without a reachable Secret Service, or a kind this build lacks.
        case notLooked = "not-looked"
    }

    var name: String
    var store: StoreKind
    var state: State
    var location: String
    var protection: ProtectionLevel?
    var entries: Int?
    var accounts: Int?
    var detail: String = ""
    /// The options that open it with every other command.
    var options: [String]

    var command: String { SharedCacheText.commandLine(["cachetool", "status"] + options) }

    static let headers = ["NAME", "STORE", "PROTECTION", "ENTRIES", "ACCOUNTS", "LOCATION", "OPEN WITH"]

    var cells: [String] {
        [
            name, store.rawValue, protection?.rawValue ?? "", entries.map(String.init) ?? "", accounts.map(String.init) ?? "",
            location, command,
        ]
    }

    var json: JSONValue {
        .object([
            "name": .string(name),
            "store": .string(store.rawValue),
            "state": .string(state.rawValue),
            "location": .string(location),
            "protection": .optional(protection?.rawValue),
            "sealed": protection.map { .bool([.keyring, .passphrase, .keyFile].contains($0)) } ?? .null,
            "entries": entries.map { .integer($0) } ?? .null,
            "accounts": accounts.map { .integer($0) } ?? .null,
            "detail": .optional(detail.isEmpty ? nil : detail),
            "command": .string(command),
        ])
    }
}

/// `cachetool discover`: the MSAL token caches on this machine, ours and the other tools'.
struct DiscoverCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discover",
        abstract: "List the MSAL token caches on this machine: our groups and the other tools' shared caches.",
        discussion: """
            Looks for:
              - the file-store groups under the file-store root (--dir, default \
            $XDG_DATA_HOME/secure-token-cache), opened with --passphrase-env or --key-file when \
            given, else as `--store file` opens them;
              - the keyring groups whose marker is in that root;
              - every place where Azure CLI, azure-identity (Python, JavaScript, Java, .NET) and \
            Azure PowerShell keep their shared cache by default: Azure CLI's \
            msal_token_cache.json, the azure-identity files and keyring items (.nocae, .cae and \
            the older msal.cache).

            For each cache found it prints the store, the protection, the number of entries and \
            accounts, where it is, and the command that opens it (any command takes the same \
            options). Keyring items and keyring groups are looked at only when a Secret Service \
            answers and its collection is unlocked, never with a prompt; otherwise discover says \
            it could not look.

            discover only reads: it never creates a file, a folder, a keyring item or a lock.

            EXAMPLES
              cachetool discover
              cachetool discover --json | jq -r '.[] | select(.sealed == false) | .command'
            """
    )

    @Flag(help: "Print a JSON array: one object per cache, with the same values.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if global.storeOption != nil || global.groupName != nil || !global.shared.given.isEmpty {
            throw ValidationError("discover looks at every store; it takes only --dir, --passphrase-env and --key-file")
        }
    }

    func run() throws {
        let keyring = Self.keyringAvailability(global.dir)
        var found = ourGroups(keyring: keyring)
        found += try Self.sharedCaches(directory: global.dir, keyring: keyring)

        if json {
            Console.line(JSONWriter.text(.array(found.map(\.json)), style: .pretty))
            return
        }
        let listed = found.filter { $0.state != .notLooked }
        if listed.isEmpty {
            Console.note("no MSAL token cache found")
        } else {
            var table = Table(DiscoveredCache.headers)
            for cache in listed { table.append(cache.cells) }
            Console.out(table.render())
        }
        for cache in listed where cache.state == .unreadable {
            Console.note("\(cache.name): could not open it: \(cache.detail)")
        }
        let skipped = found.filter { $0.state == .notLooked }
        for reason in Set(skipped.map(\.detail)).sorted() {
            let names = skipped.filter { $0.detail == reason }.map(\.name).joined(separator: ", ")
            Console.note("could not look at \(names): \(reason)")
        }
        if listed.contains(where: { $0.protection == .plaintextFile || $0.protection == .keyringItem }) {
            Console.note(
                "caches marked plaintextFile or keyringItem are not sealed; `cachetool status` with their options says what you can do"
            )
        }
    }

    /// `nil` when keyring items and groups can be looked at, else why not. Asks without a prompt.
    static func keyringAvailability(_ directory: String?) -> String? {
        do {
            try CacheGroup.checkSecretService(configuration: CacheConfiguration(store: .keyring, directory: directory))
            return nil
        } catch let error as TokenCacheError {
            return error.message
        } catch {
            return "the Secret Service could not be asked"
        }
    }

    // MARK: Our groups

    /// The file-store groups (a folder each) and keyring groups (a marker each) under the root.
    func ourGroups(keyring: String?) -> [DiscoveredCache] {
        let root = GlobalOptions.fileStoreRoot(global.dir)
        var found: [DiscoveredCache] = []
        let dirOptions = global.dir.map { ["--dir", $0] } ?? []
        for name in Self.entries(of: root) {
            if !name.hasPrefix(".") {
                guard Self.isDirectory(root + "/" + name) else { continue }
                var options = ["--group", name, "--store", "file"] + dirOptions
                if let variable = global.passphraseEnvironment { options += ["--passphrase-env", variable] }
                if let keyFile = global.keyFile { options += ["--key-file", keyFile] }
                let configuration = CacheConfiguration(store: .file, directory: global.dir, keySource: global.keySource)
                var cache = DiscoveredCache(
                    name: name, store: .file, state: .found, location: root + "/" + name, options: options)
                Self.count(&cache, configuration: configuration)
                found.append(cache)
            } else if name.hasSuffix(".in-keyring") {
                let group = String(name.dropFirst().dropLast(".in-keyring".count))
                var cache = DiscoveredCache(
                    name: group, store: .keyring, state: .found, location: "Secret Service",
                    options: ["--group", group, "--store", "keyring"] + dirOptions)
                if let keyring {
                    cache.state = .notLooked
                    cache.detail = keyring
                } else {
                    Self.count(&cache, configuration: CacheConfiguration(store: .keyring, directory: global.dir))
                }
                found.append(cache)
            }
        }
        return found
    }

    // MARK: The other tools' caches

    /// Every default place of the other tools' caches where there is one.
    static func sharedCaches(directory: String?, keyring: String?) throws -> [DiscoveredCache] {
        var found: [DiscoveredCache] = []
        let keyringBuilt = StoreKind.all.contains(.msalKeyring)
        for shared in try MSALSharedCache.knownLocations() {
            // Every tool creates the folder of its file (or of its keyring item's signal file);
            // without it there is nothing to find, and opening would create it.
            guard FileAccess.exists(FileAccess.parent(of: shared.watchedFile)) else { continue }
            var configuration = CacheConfiguration(sharedCache: shared)
            configuration.directory = directory
            let dirOptions = directory.map { ["--dir", $0] } ?? []
            var cache = DiscoveredCache(
                name: shared.name, store: shared.kind, state: .found, location: shared.description,
                options: SharedCacheText.options(shared) + dirOptions)
            switch shared.location {
            case .file(let path):
                guard FileAccess.exists(path) else { continue }
                cache.location = path
            case .keyring:
                cache.location = "Secret Service (\(shared.name))"
                if !keyringBuilt {
                    cache.state = .notLooked
                    cache.detail = "this build of cachetool has no msal-keyring store"
                } else if let keyring {
                    cache.state = .notLooked
                    cache.detail = keyring
                }
            }
            // A keyring item that is not there is not listed.
            if cache.state == .found, !count(&cache, configuration: configuration, group: shared.name) { continue }
            found.append(cache)
        }
        return found
    }

    // MARK: Opening

    /// Opens the cache read only and counts its entries and accounts, or says why it could not.
    /// Returns `false` when there is no such cache.
    @discardableResult
    static func count(_ cache: inout DiscoveredCache, configuration: CacheConfiguration, group: String? = nil) -> Bool {
        var exists = true
        do {
            let opened = try GlobalOptions.openExisting(group ?? cache.name, configuration: configuration)
            let statistics = try opened.statistics()
            cache.protection = opened.storeDescription.protection
            cache.entries = statistics.countByKind.values.reduce(0, +)
            cache.accounts = statistics.accounts
        } catch let failure as CommandFailure {
            cache.state = .unreadable
            cache.detail = failure.message
            exists = failure.status != .notFound
        } catch let error as TokenCacheError {
            cache.state = .unreadable
            cache.detail = error.message
            exists = error.code != .notFound
        } catch {
            cache.state = .unreadable
            cache.detail = "\(error)"
        }
        if cache.protection == nil, configuration.sharedCache != nil {
            cache.protection = cache.store == .msalFile ? .plaintextFile : .keyringItem
        }
        return exists
    }

    /// The names in a folder, sorted; none when it cannot be read.
    static func entries(of folder: String) -> [String] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}
