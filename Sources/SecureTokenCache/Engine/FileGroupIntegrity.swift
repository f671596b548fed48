/// Whether a file-store group's files verify under its key, found without opening the group:
/// nothing is created, locked, published, repaired or quarantined, so a group can be checked
/// while other processes use it, and a damaged one is left exactly as it was found.
///
/// ``CacheGroup/open(_:configuration:)`` on a damaged group copies the damaged file to the
/// group's `quarantine/` folder, and on a group a crash left behind finishes what the crash
/// interrupted (``Finding``). A check reports both and does neither.
public struct FileGroupIntegrity: Sendable, Hashable {
    /// Something an open of the group would repair on the way, which loses nothing acknowledged.
    public struct Finding: Sendable, Hashable, CustomStringConvertible {
        /// What kind of repair is pending. Extensible: new kinds may be added in later versions.
        public struct Kind: Hashable, Sendable, CustomStringConvertible {
            /// A stable, machine-readable name such as `"tornTail"`.
            public let name: String

            private init(_ name: String) { self.name = name }

            /// The name.
            public var description: String { name }

            /// The log ends in part of a transaction: a write cut short by a crash or a kill.
            /// The next open cuts it off; its writer never returned, so nothing acknowledged is
            /// lost.
            public static let tornTail = Kind("tornTail")
            /// Complete transactions follow the published end of the log: their writer died
            /// between syncing and publishing them (or is publishing them now). The next open
            /// publishes them.
            public static let unpublishedTransactions = Kind("unpublishedTransactions")
            /// A compaction replaced the log and its writer died before publishing it (or is
            /// publishing it now). The next open publishes it.
            public static let unpublishedCompaction = Kind("unpublishedCompaction")
        }

        /// What is pending.
        public var kind: Kind
        /// What was found and what will happen to it, for a person.
        public var message: String

        /// The kind and the message.
        public var description: String { "\(kind): \(message)" }
    }

    /// The group's folder.
    public var path: String
    /// How many entries of each kind the group holds (after the pending repairs).
    public var countByKind: [CredentialKind: Int]
    /// The group's published generation.
    public var generation: UInt64
    /// What an open would repair; empty for a group whose every write finished.
    public var findings: [Finding]

    /// Checks the file-store group `name` under the root `configuration` names, with the key its
    /// key source gives (chosen as ``CacheGroup/open(_:configuration:)`` chooses it, but without
    /// creating a key file's folder, a keyring folder or a key).
    ///
    /// ```swift
    /// let integrity = try FileGroupIntegrity.check("com.contoso.ci", configuration: configuration)
    /// for finding in integrity.findings { print(finding) }
    /// ```
    ///
    /// - Throws: ``TokenCacheError``: `.notFound` when there is no such file-store group;
    ///   `.storeCorrupted` for a damaged header, state or log (left in place, not quarantined);
    ///   `.wrongKey`, `.insecurePermissions`, `.unsupportedFormat`; the key source's errors (the
    ///   keyring's availability, a missing passphrase); `.invalidArgument` for a bad name.
    public static func check(
        _ name: String = CacheGroup.defaultName, configuration: CacheConfiguration = CacheConfiguration()
    ) throws -> FileGroupIntegrity {
        let directory = try GroupDirectory(root: CacheGroup.fileRoot(configuration), name: name)
        guard CacheGroup.exists(directory.path) else {
            throw TokenCacheError(.notFound, "there is no file-store group \(name) at \(directory.path)")
        }
        var existing = configuration
        existing.opensExistingOnly = true
        let source = try CacheGroup.fileKeySource(name, existing).source
        let keys = try source.makeProvider(group: name, configuration: existing, readOnly: true)
        let verification = try FileStore.verify(directory, keyProvider: keys)
        var counts: [CredentialKind: Int] = [:]
        for record in verification.records {
            if let kind = RecordCodec.credentialKind(record.id.kind) { counts[kind, default: 0] += 1 }
        }
        return FileGroupIntegrity(
            path: directory.path, countByKind: counts, generation: verification.generation,
            findings: findings(verification))
    }

    /// The pending repairs of `verification`, said for a person.
    private static func findings(_ verification: FileStore.Verification) -> [Finding] {
        var findings: [Finding] = []
        if verification.unpublishedCompaction {
            findings.append(
                Finding(
                    kind: .unpublishedCompaction,
                    message: "the log was compacted but the compaction not published; the next open publishes it"))
        }
        if verification.unpublishedTransactions > 0 {
            findings.append(
                Finding(
                    kind: .unpublishedTransactions,
                    message:
                        "\(verification.unpublishedTransactions) complete transaction(s) follow the published end of the log; the next open publishes them"
                ))
        }
        if verification.tornByteCount > 0 {
            findings.append(
                Finding(
                    kind: .tornTail,
                    message:
                        "the log ends in \(verification.tornByteCount) byte(s) of a write that was cut short; the next open cuts them off, and nothing acknowledged is lost"
                ))
        }
        return findings
    }
}
