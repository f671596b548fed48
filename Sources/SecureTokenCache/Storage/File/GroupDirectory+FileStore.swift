import Glibc

/// What only a file-store group's folder does: being created whole, and keeping copies of
/// damaged files.
extension GroupDirectory {
    /// Creates the group atomically: builds it in a hidden sibling directory and renames that into
    /// place, so no process ever sees a half-made group. Returns the new group's sealer, or `nil`
    /// if another process created the group first (then open that one).
    func create(keyProvider: any KeyProvider) throws -> RecordSealer? {
        try createRoot()
        let suffix = try Sodium.randomBytes(6).map { String($0, radix: 16) }.joined()
        let temporary = root + "/.\(name).new-\(getpid())-\(suffix)"
        guard try SystemCall.mkdir(temporary, "creating the group directory") else {
            throw SystemCall.error("mkdir", "creating the group directory", errno: EEXIST)
        }
        var renamed = false
        defer {
            if !renamed {
                for file in ["header", "log", "state", "lock"] { SystemCall.removeLeftover(temporary + "/" + file) }
                SystemCall.removeLeftoverDirectory(temporary)
            }
        }
        let groupID = try Sodium.randomBytes(16)
        let provided = try keyProvider.makeKey(groupID: groupID, groupName: name)
        let source = provided.source
        let sealer = try RecordSealer(groupKey: provided.key, groupName: name)
        let header = try GroupHeader(groupID: groupID, keySource: source, sealer: sealer)
        try SystemCall.writeNewFile(temporary + "/header", header.encoded(), "writing the group header")
        try SystemCall.writeNewFile(temporary + "/log", LogFormat.header(epoch: 1, groupID: groupID), "writing the group log")
        try SystemCall.writeNewFile(
            temporary + "/state",
            SharedState.initialBytes(CommitWord(epoch: 1, length: UInt64(LogFormat.headerByteCount))),
            "writing the group state"
        )
        try SystemCall.writeNewFile(temporary + "/lock", [], "creating the group lock")
        try SystemCall.fsyncDirectory(temporary)
        do {
            try SystemCall.rename(temporary, path, "creating the group directory \(path)")
        } catch let error as TokenCacheError
            where error.underlying == .posix(call: "rename", errno: EEXIST)
            || error.underlying == .posix(call: "rename", errno: ENOTEMPTY)
        {
            return nil
        }
        renamed = true
        try SystemCall.fsyncDirectory(root)
        return sealer
    }

    /// Copies the group's `file` into `quarantine/` (created `0700`) and returns the copy's
    /// path, or `nil` if no copy could be made. The damaged file itself is left in place.
    func quarantine(_ file: String) -> String? {
        let folder = path + "/quarantine"
        guard (try? SystemCall.mkdir(folder, "making the quarantine folder")) != nil else { return nil }
        guard let source = try? SystemCall.open(self.file(file), O_RDONLY | O_NOFOLLOW, 0, "reading a damaged file") else {
            return nil
        }
        defer { SystemCall.close(source) }
        guard let bytes = try? SystemCall.readAll(source, "reading a damaged file") else { return nil }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        for attempt in 0..<100 {
            let copy = folder + "/\(file).\(now.tv_sec).\(now.tv_nsec).\(getpid()).\(attempt)"
            do {
                try SystemCall.writeNewFile(copy, bytes, "quarantining a damaged file")
                try? SystemCall.fsyncDirectory(folder)
                return copy
            } catch let error as TokenCacheError where error.underlying == .posix(call: "open", errno: EEXIST) {
                continue
            } catch {
                return nil
            }
        }
        return nil
    }
}
