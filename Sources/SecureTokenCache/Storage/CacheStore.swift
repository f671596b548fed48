/// A durable home for one group's records: the seam between the engine and a backend (the
/// MemoryStore, the FileStore, the KeyringStore, and any store added later).
///
/// The engine does for every backend what they all need: it seals and opens records
/// (``RecordSealer``, one key per group), keeps the in-memory index and answers every lookup from
/// it, decides what a write changes, and keeps readers coherent by comparing generations. A
/// backend only stores sealed bytes and says what changed. A new backend proves it keeps the
/// promises below by passing the shared conformance suite (`StoreConformance` in the tests).
///
/// What a backend guarantees:
/// - **One generation, shared.** ``currentGeneration()`` returns a number every process that
///   opened the group sees, bumped by every commit of any process and never going back. The
///   lookup hot path calls it before every answer: it must cost about one atomic load (a shared
///   mapping, an in-memory word), never a system call, a lock another process can hold, or I/O.
///   In a database that processes on several machines share (``RowStore``), a commit of another
///   process moves it when the commit's announcement arrives, not before.
/// - **Readers never wait and never see half a transaction.** ``update(since:)`` never waits for
///   a writer and returns only whole committed transactions: `.unchanged` when the cursor is
///   current, `.changes` (in commit order) when it can replay what the cursor has not seen, or
///   `.reload` with everything when it cannot (another process compacted, the history is gone).
/// - **Atomic, durable, serialised transactions.** ``transact(since:_:)`` runs under the group's
///   cross-process lock (waiting a bounded time, then `.lockTimeout` naming the holder), hands
///   the body every change since the caller's cursor, persists the body's changes as one
///   transaction, bumps the generation once, and returns the cursor after the commit. If the body
///   or the persistence throws, nothing is written and the generation does not move. A body that
///   returns no change commits nothing. A store may run the body more than once (``RowStore``
///   first tries on what the process holds and runs it again on what another process committed
///   meanwhile): only the run whose changes are committed counts, so a body changes nothing
///   outside what it returns.
/// - **Crash mid-commit.** A process killed at any point of a commit leaves the group at the
///   transaction before or the one it was writing, whole; the lock is released by the kernel or
///   taken over; a transaction whose ``transact(since:_:)`` returned is never lost.
/// - **A miss may ask once more.** Before a lookup answers "nothing" (no token, no account), the
///   engine calls ``checkForChanges()`` and, when it returns `true`, looks again. A store whose
///   generation moves before a commit of any process returns needs nothing there: the default
///   does nothing and returns `false`. A store whose generation learns of another process's
///   commits only when a watcher thread wakes (``SharedCacheStore``: the other tools' writes)
///   compares the medium with what it last read, at the cost of one `stat`, and moves the
///   generation when they differ, so that a lookup right after another process's write never
///   misses it. A database that many machines share (``RowStore``), whose processes hear of
///   each other's commits when an announcement arrives, reads the group's generation (one
///   round trip), so that an instance that waited for another's token request finds its token.
///   Never called on a hit, which stays one atomic load.
/// - **Change notification.** ``changes()`` yields after each burst of commits by any process (a
///   hint to compare generations, never a change list); events may coalesce, never be missed.
/// - **Never a shorter group, never plaintext.** A record that fails to open, a wrong key, damage
///   or a missing item is a typed ``TokenCacheError`` (`.wrongKey`, `.storeCorrupted`, ...),
///   never an empty or shortened group; nothing is written unsealed.
/// - **One place to meet.** ``groupDirectory`` is where every process that opens the group finds
///   its coordination files (lock, refresh locks, shared page), whatever its environment.
protocol CacheStore: AnyObject, Sendable {
    /// What the store is, where, and how it protects the data.
    var storeDescription: StoreDescription { get }

    /// The folder where every process that opens the group finds the group's coordination files
    /// (its lock, refresh locks, shared counter), whatever that process's environment; `nil` for a
    /// store that only this process sees.
    var groupDirectory: GroupDirectory? { get }

    /// The locks every process of the group takes the same way, for a store whose processes do
    /// not share a ``groupDirectory`` (they run on several machines); `nil` otherwise.
    var groupLocks: (any GroupLocks)? { get }

    /// The group's shared generation counter: one atomic load.
    func currentGeneration() -> UInt64

    /// Looks, at the cost of about one system call (a database: one round trip), for a commit of
    /// another process that ``currentGeneration()`` does not show yet, and moves the generation
    /// when it finds one. Returns whether it moved. Called only before a lookup answers "nothing".
    func checkForChanges() -> Bool

    /// Everything the group holds, and the cursor after it.
    func load() throws -> ([Record], StoreCursor)

    /// What changed since `cursor`: only the records the caller has not seen.
    func update(since cursor: StoreCursor) throws -> StoreUpdate

    /// Runs one write transaction under the group's lock. Returns the cursor after the commit,
    /// which already includes the body's own changes.
    func transact(
        since cursor: StoreCursor,
        _ body: (StoreTransaction) throws -> [RecordChange]
    ) throws -> StoreCursor

    /// A stream with one element after each burst of commits to the group by any process (this
    /// one included). The stream ends when the caller drops it.
    func changes() throws -> AsyncStream<Void>
}

extension CacheStore {
    /// Nothing to look for: the generation moves with every commit, of any process, before the
    /// commit returns.
    func checkForChanges() -> Bool { false }

    /// Watches ``groupDirectory`` with inotify: every commit of a durable store writes there (the
    /// file store's log, the keyring store's journal).
    func changes() throws -> AsyncStream<Void> {
        guard let directory = groupDirectory else {
            throw TokenCacheError(.invalidArgument, "this store has no folder to watch")
        }
        let watcher = try GroupChangeWatcher(directory: directory.path)
        return AsyncStream { continuation in
            let task = Task {
                for await _ in watcher.changes { continuation.yield(()) }
                continuation.finish()
            }
            continuation.onTermination = { _ in
                task.cancel()
                _ = watcher  // keeps the watcher (and its thread) alive as long as the stream
            }
        }
    }
}
