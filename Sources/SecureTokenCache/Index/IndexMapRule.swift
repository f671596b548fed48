/// A row of ``IndexMaps/table`` with its key and value types hidden: what filing entries one at a
/// time and in bulk asks of every map alike.
protocol IndexMapRule: Sendable {
    /// How entries are filed in the map.
    var filing: MapFiling { get }

    /// Files `stored` in the map of `maps` (or takes it out, unless `adding`), if it is filed there.
    func file(_ stored: StoredEntry, adding: Bool, in maps: inout IndexMaps)

    /// Whether `old` and `new` are filed under the same key here (or both nowhere).
    func filesAlike(_ old: CacheEntry, _ new: CacheEntry) -> Bool

    /// Puts `stored` in place of the entry with its id, filed under the same key, where the map
    /// holds entries rather than ids.
    func refile(_ stored: StoredEntry, in maps: inout IndexMaps)

    /// A decoding thread's gathering of rows under interned slots, under the map's keys, made
    /// from `decoder`'s interned text once per distinct key.
    func converted(_ gathered: Grouping<SlotKey>, decoder: inout EntryDecoder) -> any JoinableGrouping

    /// Makes the map of `maps` from `gathered` (what ``converted(_:decoder:)`` made, joined),
    /// filing rows of `table`.
    func install(_ gathered: any JoinableGrouping, rows table: EntryTable, in maps: inout IndexMaps)

    /// The map's contents in `maps` as text, by map name: every key and what it files in filing
    /// order (see ``Index/filingContents()``).
    func contents(of maps: IndexMaps) -> [String: [String: [String]]]
}
