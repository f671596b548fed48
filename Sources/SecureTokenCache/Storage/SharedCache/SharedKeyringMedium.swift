import Glibc

/// A shared cache kept as one Secret Service item, with the signal file the tools watch
/// (azure-identity for Python, JavaScript and Java; Azure.Identity for .NET; the extensions'
/// libsecret persistence).
///
/// The item holds the whole document as a text secret, stored with libsecret's password call as
/// the tools store it: the JSON text itself, or Base64 of it (``MSALSharedCache/Encoding``).
/// After each write the signal file is touched, with its modification time from the precise
/// clock: msal-extensions for Python reads the item only when the signal file exists and its
/// time is later than the wall-clock time of its own last read or write, and the .NET extension
/// watches the same file. A Secret Service store replaces the item whole, so a reader never sees
/// part of a document.
struct SharedKeyringMedium: SharedDocumentMedium {
    /// The item and its signal file.
    let item: MSALSharedCache.KeyringItem
    /// The binding for the item's schema and collection.
    let client: KeyringClient

    /// The medium for `item`, talking to the Secret Service as `options` say.
    ///
    /// - Throws: ``TokenCacheError/Code/invalidArgument`` when the item's schema name, attributes,
    ///   label or collection cannot name a Secret Service item.
    init(_ item: MSALSharedCache.KeyringItem, options: KeyringOptions) throws {
        for (text, what) in [(item.schema, "schema name"), (item.label, "label"), (item.collection, "collection")]
        where text.isEmpty || text.utf8.contains(0) {
            throw TokenCacheError(.invalidArgument, "the keyring item's \(what) must be non-empty and free of NUL characters")
        }
        guard !item.collection.hasPrefix("/") else {
            throw TokenCacheError(
                .invalidArgument, "the keyring item's collection must be an alias such as default, not an object path")
        }
        // libsecret's schema holds at most 32 attributes, and it derives `xdg:schema` itself.
        guard !item.attributes.isEmpty, item.attributes.count <= 32 else {
            throw TokenCacheError(.invalidArgument, "a shared keyring item needs between 1 and 32 attributes")
        }
        for name in item.attributes.keys where name.isEmpty || name.utf8.contains(0) || name == "xdg:schema" {
            throw TokenCacheError(
                .invalidArgument,
                "the keyring item's attribute names must be non-empty, free of NUL characters and not xdg:schema (the schema name sets it)"
            )
        }
        self.item = item
        client = KeyringClient(
            schema: KeyringSchema(
                name: item.schema, attributes: Array(item.attributes.keys), matchesName: item.matchesSchemaName),
            options: options, collection: item.collection)
    }

    var location: String {
        let attributes = item.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        return "keyring item \(item.schema) (\(attributes)), signal file \(item.signalFile)"
    }

    var watchedFile: String { item.signalFile }

    var exposure: String {
        "JSON\(item.encoding == .base64 ? " (as Base64)" : "") in the keyring item \(item.schema): the other tools' format, which cannot be sealed; any process of yours can read it while the keyring collection is unlocked"
    }

    func version() throws -> DocumentVersion? {
        try SystemCall.lstat(item.signalFile, "looking at the shared cache's signal file \(item.signalFile)").map(
            DocumentVersion.init)
    }

    func exists() throws -> Bool {
        // A search without unlocking or reading secrets: attributes are public, even while the
        // collection is locked, and nothing is created or prompted for.
        try client.count(matching: item.attributes) > 0
    }

    func read() throws -> (bytes: [UInt8], version: DocumentVersion?) {
        // The signal file before the item: a write that lands after this read touches it later,
        // so the version recorded here is never newer than the document read.
        let version = try version()
        guard let stored = try client.withSecret(attributes: item.attributes, { Array($0) }) else { return ([], version) }
        return (try decode(stored), version)
    }

    func write(_ bytes: [UInt8]) throws -> DocumentVersion {
        let text =
            switch item.encoding {
            case .raw: String(decoding: bytes, as: UTF8.self)
            case .base64: Self.base64(bytes)
            }
        try client.storeText(text, label: item.label, attributes: item.attributes)
        return try touchSignalFile()
    }

    /// Nothing: a Secret Service store leaves nothing behind when the writer is killed.
    func removeLeftovers() {}

    // MARK: - The signal file

    /// Creates the signal file if it is missing (`0600`, empty) and sets its times to now from
    /// the precise clock; returns its version. An existing file keeps its mode and content (the
    /// tools write a note into it).
    private func touchSignalFile() throws -> DocumentVersion {
        let path = item.signalFile
        let what = "touching the shared cache's signal file \(path)"
        let folder = SystemCall.parentDirectory(of: path)
        if try SystemCall.lstat(folder, what) == nil { try GroupDirectory.createFolders(folder) }
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP {
                throw TokenCacheError(
                    .insecurePermissions,
                    "the signal file \(path) is a symbolic link; refusing to follow it: replace it with a file")
            }
            throw SystemCall.error("open", what, errno: code)
        }
        defer { close(fd) }
        let info = try SystemCall.fstat(fd, what)
        guard info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else {
            throw TokenCacheError(
                .insecurePermissions, "the signal file \(path) is not a regular file owned by you; fix or remove it")
        }
        // The coarse clock the kernel stamps files with can lag the wall clock a reader compared
        // against; the precise one cannot.
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var times = [now, now]
        guard futimens(fd, &times) == 0 else { throw SystemCall.error("futimens", what) }
        return DocumentVersion(try SystemCall.fstat(fd, what))
    }

    // MARK: - The two dialects

    /// The document in `stored`, as ``MSALSharedCache/KeyringItem/encoding`` says it is held.
    ///
    /// - Throws: ``TokenCacheError/Code/malformedCache`` when the item holds the other dialect
    ///   (saying which encoding opens it) or, for Base64, is not Base64. Invalid JSON is left to
    ///   the document parser, which names the cache.
    func decode(_ stored: [UInt8]) throws -> [UInt8] {
        switch item.encoding {
        case .raw:
            // Only an item that does not start as a JSON object is looked at again as Base64: a
            // document, read under the tools' lock and possibly large, is taken as it is.
            if !Self.looksLikeJSONObject(stored), let decoded = Self.decodeBase64(stored.filter { !Self.isWhitespace($0) }),
                Self.looksLikeJSONObject(decoded)
            {
                throw TokenCacheError(
                    .malformedCache,
                    "the shared cache \(location) holds Base64 of a document (the .NET, Java and Go dialect), where raw JSON was expected: open it with encoding base64; nothing was changed"
                )
            }
            return stored
        case .base64:
            let text = stored.filter { !Self.isWhitespace($0) }
            guard !text.isEmpty else { return [] }
            if text.first == UInt8(ascii: "{") {
                throw TokenCacheError(
                    .malformedCache,
                    "the shared cache \(location) looks like raw JSON (the Python and Node dialect), where Base64 was expected: open it with encoding raw; nothing was changed"
                )
            }
            guard let decoded = Self.decodeBase64(text) else {
                throw TokenCacheError(
                    .malformedCache,
                    "the shared cache \(location) holds neither Base64 nor JSON; nothing was changed. Sign in again with the tool that owns it, or delete the item"
                )
            }
            return decoded
        }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// Whether `bytes` start, after white space, as a JSON object does.
    static func looksLikeJSONObject(_ bytes: [UInt8]) -> Bool {
        bytes.first { !isWhitespace($0) } == UInt8(ascii: "{")
    }

    /// Standard Base64 with padding, as .NET's `Convert.ToBase64String` writes it.
    static func base64(_ bytes: [UInt8]) -> String {
        // One codec for both alphabets: base64url without padding, mapped to the standard
        // alphabet and padded.
        var text = Array(Base64URL.encode(bytes).utf8).map { byte -> UInt8 in
            switch byte {
            case UInt8(ascii: "-"): UInt8(ascii: "+")
            case UInt8(ascii: "_"): UInt8(ascii: "/")
            default: byte
            }
        }
        while text.count % 4 != 0 { text.append(UInt8(ascii: "=")) }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes of standard Base64 text (whitespace already removed), or `nil` when it is not
    /// whole Base64 in the standard alphabet.
    static func decodeBase64(_ text: [UInt8]) -> [UInt8]? {
        guard !text.isEmpty, text.count % 4 == 0,
            !text.contains(UInt8(ascii: "-")), !text.contains(UInt8(ascii: "_"))
        else { return nil }
        return Base64URL.decode(String(decoding: text, as: UTF8.self))
    }
}
