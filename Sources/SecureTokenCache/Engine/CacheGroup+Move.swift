import Glibc

extension CacheGroup {
    /// Moves the group `name` between any two stores that outlive the process, in either
    /// direction: the keyring store, the file store, and the other tools' shared caches
    /// (``MSALSharedCache``), one tool's into another's too. Nothing is lost: every record
    /// (tokens, accounts, sign-in state, unknown MSAL sections) is copied, the copy is read back
    /// and compared, and only then is the source emptied. Returns the number of records moved.
    ///
    /// The copy is made under the source group's lock, so no write of another process can slip
    /// between the copy and the emptying; processes that still have the group open in the old
    /// store should reopen it. A file-store source directory is emptied and set aside as
    /// `.<name>.moved-<time>` (sealed, holding no records), so `auto` finds the group in its new
    /// home. A shared cache that is the source is left as a valid, empty document: its tool is
    /// signed out; one that is the destination signs its tool in, and holds the tokens unsealed.
    /// Throws `.invalidArgument` if the destination already holds records or either side is
    /// `.auto` or a store that does not outlive the process.
    ///
    /// ```swift
    /// let moved = try CacheGroup.move(
    ///     "com.contoso.apps",
    ///     from: CacheConfiguration(store: .keyring),
    ///     to: CacheConfiguration(store: .file, keySource: .keyFile(path: "/home/me/.config/contoso.key")))
    /// print("moved \(moved) records")
    /// ```
    @discardableResult
    public static func move(_ name: String, from source: CacheConfiguration, to destination: CacheConfiguration) throws -> Int {
        for side in [source, destination] {
            guard side.store != .auto, try StoreBackends.backend(side.store).isDurable else {
                throw TokenCacheError(
                    .invalidArgument, "a group moves between stores that outlive the process, not \(side.store.rawValue)")
            }
        }
        guard
            source.store != destination.store || source.directory != destination.directory
                || source.sharedCache != destination.sharedCache
        else {
            throw TokenCacheError(.invalidArgument, "the source and the destination are the same store")
        }
        let from = try open(name, configuration: source)
        let to = try open(name, configuration: destination)
        let (existing, destinationCursor) = try to.store.load()
        // A shared cache a tool signed out of, or one a move emptied, is a document with empty
        // sections: the order of its sections is all it holds, nothing to merge with.
        let layout = existing.filter { $0.id.kind == .layout }
        guard existing.count == layout.count else {
            throw TokenCacheError(
                .invalidArgument,
                "the destination already holds \(existing.count - layout.count) records of group \(name); nothing was moved")
        }
        var moved = 0
        _ = try from.store.transact(since: StoreCursor.start) { transaction in
            // Everything the source holds, read under its lock.
            var records: [RecordID: Record] = [:]
            try collect(transaction.update, into: &records)
            let copy = Array(records.values)
            _ = try to.store.transact(since: destinationCursor) { _ in copy.map(RecordChange.put) }
            // Read the copy back before the source loses anything. The destination's layout stays
            // unless the source brought its own.
            let (written, _) = try to.store.load()
            let check = Dictionary(written.map { ($0.id, $0.payload) }, uniquingKeysWith: { first, _ in first })
            let kept = layout.filter { records[$0.id] == nil }.count
            guard check.count == records.count + kept, records.allSatisfy({ check[$0.key] == $0.value.payload }) else {
                throw TokenCacheError(
                    .ioFailure, "the copy of group \(name) did not read back whole; the source was kept as it was")
            }
            moved = records.count
            return records.keys.map(RecordChange.delete)
        }
        try StoreBackends.backend(source.store).retire(name, source)
        return moved
    }

    private static func collect(_ update: StoreUpdate, into records: inout [RecordID: Record]) throws {
        switch update {
        case .unchanged: break
        case .reload(let all, _):
            records = Dictionary(all.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        case .changes(let changes, _):
            for change in changes {
                switch change {
                case .put(let record): records[record.id] = record
                case .delete(let id): records[id] = nil
                }
            }
        }
    }
}
