/// A store of which a process may keep only part in memory: the partitions (``CachePartition``)
/// it uses, loaded when first asked for and dropped when the group's memory limit is reached.
/// A database that a fleet shares (``RowStore``) holds every instance's callers; each instance
/// keeps the callers it serves.
///
/// What such a store adds to the ``CacheStore`` contract, while it keeps part of the group:
/// - ``CacheStore/load()`` returns the records of no partition (app metadata, sign-in state),
///   which every process keeps.
/// - ``CacheStore/update(since:)`` and the update ``CacheStore/transact(since:_:)`` hands its
///   body hold only the changes to kept records; ``CacheStore/currentGeneration()`` moves only
///   for commits that touched kept records (or that the store cannot tell apart).
/// - ``keep(_:since:)`` is an update that also holds the whole contents of the partitions it
///   starts keeping, read in the same snapshot as the rest.
protocol PartialStore: CacheStore {
    /// Whether the store keeps only part of the group; `false` when it keeps all of it.
    var keepsPart: Bool { get }

    /// Whether the partition with this ``CachePartition/storageKey`` is kept.
    func keeps(_ partition: String) -> Bool

    /// Starts keeping `partitions` (by ``CachePartition/storageKey``): what changed since
    /// `cursor` in the partitions kept so far, with every record of the new ones. A partition
    /// that holds nothing is kept only `evenIfEmpty` (for a write about to fill it): a lookup
    /// that finds nothing leaves nothing behind, however many callers it is asked about.
    func keep(_ partitions: [String], since cursor: StoreCursor, evenIfEmpty: Bool) throws -> StoreUpdate

    /// Stops keeping `partitions`, whose records the caller no longer holds.
    func drop(_ partitions: [String])
}
