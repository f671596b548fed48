/// Where the processes that open a group meet: the folder of its lock, refresh locks and shared
/// counter, found the way every process finds it, and whether a process holds the lock now.
/// Read only: finding it creates nothing.
public struct CoordinationFolder: Sendable, Hashable {
    /// The store the folder belongs to (``StoreKind/file`` or
    /// ``StoreKind/keyring``).
    public var store: StoreDescription.Kind
    /// The folder's path.
    public var path: String
    /// Whether the folder exists.
    public var exists: Bool
    /// The pid that last took the group lock, if the lock file records one.
    public var lockHolder: Int32?
    /// Whether a process holds the group lock at this moment.
    public var isLocked: Bool
    /// How long the holder has held the group lock, when a process holds it: since it recorded
    /// its pid.
    public var lockHeldFor: Duration?

    /// The coordination folders of group `name` for the file and keyring stores under the root
    /// `configuration` names (default `$XDG_DATA_HOME/secure-token-cache`), whether or not the
    /// group exists in either.
    ///
    /// - Throws: ``TokenCacheError/Code/invalidArgument`` for a bad name or no home directory.
    public static func all(group name: String, configuration: CacheConfiguration = CacheConfiguration()) throws
        -> [CoordinationFolder]
    {
        let root = try CacheGroup.fileRoot(configuration)
        return try [
            (StoreDescription.Kind.file, GroupDirectory(root: root, name: name)),
            (.keyring, GroupDirectory.keyring(root: root, name: name)),
        ].map { kind, directory in
            let holder = FileLock(path: directory.file("lock"), purpose: "the group").holder()
            return CoordinationFolder(
                store: kind, path: directory.path, exists: CacheGroup.exists(directory.path), lockHolder: holder?.pid,
                isLocked: holder?.held ?? false,
                lockHeldFor: holder.flatMap { $0.held ? SystemCall.age(of: $0.since) : nil })
        }
    }
}
