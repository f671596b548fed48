import Glibc

/// A look at a file-store group that changes nothing: what `cachetool doctor` reports.
extension FileStore {
    /// What ``verify(_:keyProvider:)`` found: the group as the next open would load it, and what
    /// that open would repair on the way (none of which is damage).
    struct Verification {
        /// The records the group holds.
        var records: [Record]
        /// The published generation.
        var generation: UInt64
        /// Complete, authenticated transactions past the published end of the log: a writer died
        /// between its `fsync` and publishing (or is publishing now). The next open adopts them.
        var unpublishedTransactions = 0
        /// Bytes past the last complete transaction: an append cut short. The next open cuts them.
        var tornByteCount: UInt64 = 0
        /// The log was replaced by a compaction whose epoch was never published (its writer died
        /// between the rename and publishing, or is publishing now). The next open publishes it.
        var unpublishedCompaction = false
    }

    /// Reads the group in `directory` as an open does (header, key check, state, the whole log
    /// through the same scanner), and changes nothing: it takes no lock (which would record this
    /// process's pid), publishes, adopts and cuts nothing, quarantines nothing and creates no
    /// folder or file. Files are opened read only, their access times left alone.
    ///
    /// - Throws: ``TokenCacheError``: `.notFound` when the group's folder does not exist,
    ///   `.insecurePermissions`, `.storeCorrupted` (a damaged header, state or log: what an open
    ///   would quarantine), `.unsupportedFormat`, `.wrongKey`, and the key provider's errors.
    static func verify(_ directory: GroupDirectory, keyProvider: any KeyProvider) throws -> Verification {
        try directory.checkSecure()
        let header = try GroupHeader.read(in: directory)
        let sealer = try RecordSealer(
            groupKey: keyProvider.key(for: header.keySource, groupID: header.groupID, groupName: directory.name),
            groupName: directory.name)
        try header.requireKey(sealer, groupName: directory.name)
        let (generation, word) = try SharedState.read(in: directory)
        let fd = try directory.openFile("log", O_RDONLY, "opening the group log")
        defer { SystemCall.close(fd) }
        let bytes = try SystemCall.readAll(fd, "reading the group log")
        guard let epoch = LogFormat.epoch(ofHeader: bytes, groupID: header.groupID) else { throw damagedLogHeader }
        var scanner = LogScanner(sealer: sealer, lastSequence: 0, lastCommit: 0)
        let size = UInt64(bytes.count)
        if epoch == word.epoch &+ 1 {
            // What an open publishes in this case: every complete transaction of the new log.
            var log = try scanner.scan(bytes, from: LogFormat.headerByteCount, to: bytes.count, lenient: true)
            guard let end = log.end else { throw compactedWithoutTransaction }
            return Verification(
                records: LogReplay.liveRecords(&log).records, generation: generation, tornByteCount: size - end,
                unpublishedCompaction: true)
        }
        guard epoch == word.epoch else { throw epochMismatch }
        guard size >= word.length else { throw shorterLog(size, word) }
        var log = try scanner.scan(bytes, from: LogFormat.headerByteCount, to: Int(word.length), lenient: false)
        // As an open's recovery reads the tail: the scanner continues the committed chain.
        let tail = (try? scanner.scan(bytes, from: Int(word.length), to: bytes.count, lenient: true)) ?? .empty
        log.append(tail)
        return Verification(
            records: LogReplay.liveRecords(&log).records, generation: generation,
            unpublishedTransactions: tail.transactions.count, tornByteCount: size - (tail.end ?? word.length))
    }
}
