/// The kind of a stored record. The raw value is part of every record's associated data, so a
/// record cannot be moved to another kind unnoticed; never renumber.
enum RecordKind: UInt8, Sendable, Hashable, CaseIterable {
    case accessToken = 1
    case refreshToken = 2
    case idToken = 3
    case account = 4
    case appMetadata = 5
    /// The order of the MSAL JSON sections (for byte-exact export).
    case layout = 6
    /// A top-level MSAL JSON section this engine does not know, kept verbatim.
    case unknownSection = 7
    /// Per-client sign-in state: signed in / signed out accounts, current and previous account.
    case clientState = 8
    /// A tenant named by domain in a request (`contoso.onmicrosoft.com`) and the tenant id
    /// (`tid`) its tokens were stored under.
    case tenantAlias = 9
}

/// The identity of a record in a group: its kind and a name unique within that kind (for an
/// MSAL entry, its cache key).
struct RecordID: Sendable, Hashable {
    var kind: RecordKind
    var name: String
}

/// One record in plaintext. Stores seal the payload before it leaves memory.
///
/// The payload is a slice: records opened from one sealed batch share the batch's plaintext
/// instead of each copying its bytes out, so opening a group allocates no buffer per record.
/// Index it from `startIndex`, never from 0.
struct Record: Sendable {
    var id: RecordID
    var payload: ArraySlice<UInt8>

    /// A record holding `payload`.
    init(id: RecordID, payload: ArraySlice<UInt8>) {
        self.id = id
        self.payload = payload
    }

    /// A record holding all of `payload`.
    init(id: RecordID, payload: [UInt8]) {
        self.init(id: id, payload: payload[...])
    }
}

/// One change to a group's records.
enum RecordChange: Sendable {
    case put(Record)
    case delete(RecordID)

    var id: RecordID {
        switch self {
        case .put(let record): record.id
        case .delete(let id): id
        }
    }
}

/// Where a reader is in a store's history. Opaque to everything but the store that made it.
struct StoreCursor: Sendable, Hashable {
    /// The group's generation this cursor reflects.
    var generation: UInt64
    /// Changes when the store's history is rewritten (compaction, restore): a cursor from
    /// another epoch can only be caught up by a reload.
    var epoch: UInt64
    /// A store-specific position (for the FileStore, the log offset after the last commit seen).
    var position: UInt64

    /// The cursor of a reader that has seen nothing.
    static let start = StoreCursor(generation: 0, epoch: 0, position: 0)
}

/// What a reader must do to catch up with a store.
enum StoreUpdate: Sendable {
    /// Nothing changed since the cursor.
    case unchanged(StoreCursor)
    /// Apply these changes, in order, on top of what the cursor reflects.
    case changes([RecordChange], StoreCursor)
    /// Replace everything with these records (after a compaction by another process, say).
    case reload([Record], StoreCursor)

    /// The cursor after applying this update.
    var cursor: StoreCursor {
        switch self {
        case .unchanged(let cursor), .changes(_, let cursor), .reload(_, let cursor): cursor
        }
    }
}

/// What a transaction body sees: the changes it must apply to catch up, and whether this
/// commit will compact the store (then the body may add deletions of expired access tokens,
/// which the engine purges at compaction).
struct StoreTransaction: Sendable {
    /// The changes since the caller's cursor, read under the group's lock.
    var update: StoreUpdate
    /// Whether the store will rewrite itself after this commit.
    var compacting: Bool
}

/// The protection a group's data has at rest.
public enum ProtectionLevel: String, Sendable, Hashable, CustomStringConvertible {
    /// Sealed with a key held by the Secret Service (the desktop keyring).
    case keyring
    /// Sealed with a key derived from a passphrase (Argon2id).
    case passphrase
    /// Sealed with a key read from a key file (0600).
    case keyFile
    /// Held in process memory only; nothing is written anywhere.
    case memoryOnly

    /// A description for people; never contains a secret.
    public var description: String {
        switch self {
        case .keyring: "sealed with a key held by the Secret Service"
        case .passphrase: "sealed with a passphrase-derived key (Argon2id)"
        case .keyFile: "sealed with a key file"
        case .memoryOnly: "in memory only, never written"
        }
    }
}

/// What a group is stored in, where, how it is protected and why it was chosen.
public struct StoreDescription: Sendable, Hashable {
    /// The kind of store.
    public typealias Kind = StoreKind

    /// The kind of store.
    public var kind: Kind
    /// Where the data lives: a directory, or a Secret Service collection.
    public var location: String
    /// What protects the data at rest.
    public var protection: ProtectionLevel
    /// Why this store was chosen (for `auto`), in a sentence.
    public var reason: String
    /// The folder of the group's coordination files (lock, refresh locks, shared counter), which
    /// every process that opens the group uses whatever its environment; `nil` for a memory group.
    public var coordinationDirectory: String?
    /// What the user should know about the group's state (for example processes that do not
    /// share its coordination folder); empty when all is well. Never holds a secret.
    public var warnings: [String] = []

    /// A description with the given parts.
    public init(kind: Kind, location: String, protection: ProtectionLevel, reason: String, coordinationDirectory: String? = nil) {
        self.kind = kind
        self.location = location
        self.protection = protection
        self.reason = reason
        self.coordinationDirectory = coordinationDirectory
    }
}

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
/// - **Readers never wait and never see half a transaction.** ``update(since:)`` never waits for
///   a writer and returns only whole committed transactions: `.unchanged` when the cursor is
///   current, `.changes` (in commit order) when it can replay what the cursor has not seen, or
///   `.reload` with everything when it cannot (another process compacted, the history is gone).
/// - **Atomic, durable, serialised transactions.** ``transact(since:_:)`` runs under the group's
///   cross-process lock (waiting a bounded time, then `.lockTimeout` naming the holder), hands
///   the body every change since the caller's cursor, persists the body's changes as one
///   transaction, bumps the generation once, and returns the cursor after the commit. If the body
///   or the persistence throws, nothing is written and the generation does not move. A body that
///   returns no change commits nothing.
/// - **Crash mid-commit.** A process killed at any point of a commit leaves the group at the
///   transaction before or the one it was writing, whole; the lock is released by the kernel or
///   taken over; a transaction whose ``transact(since:_:)`` returned is never lost.
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

    /// The group's shared generation counter: one atomic load.
    func currentGeneration() -> UInt64

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
