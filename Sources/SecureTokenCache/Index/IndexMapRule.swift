/// A row of ``IndexMaps/table`` with its key and value types erased: what filing entries one at
/// a time and in bulk asks of every map alike.
///
/// The operations are closures made where the row's ``MapRule`` is made, with its types known,
/// so each runs code compiled for its map's key and value types rather than generic code that
/// looks them up at run time: filing is on the path of every write. A class, so walking the table
/// retains one reference per row rather than each of its closures.
final class IndexMapRule: Sendable {
    /// How entries are filed in the map.
    let filing: MapFiling
    /// ``MapRule/file(_:adding:in:)`` of the row's rule, and so on for the others.
    private let fileEntry: @Sendable (StoredEntry, Bool, inout IndexMaps) -> Void
    private let filesAlikeEntries: @Sendable (CacheEntry, CacheEntry) -> Bool
    private let refileEntry: @Sendable (StoredEntry, inout IndexMaps) -> Void
    private let convertGathered: @Sendable (Grouping<SlotKey>, inout EntryDecoder) -> any JoinableGrouping
    private let installGathered: @Sendable (any JoinableGrouping, EntryTable, inout IndexMaps) -> Void
    private let joinGathered: @Sendable (inout any JoinableGrouping, any JoinableGrouping, Int) -> Void
    private let describe: @Sendable (IndexMaps) -> [String: [String: [String]]]

    /// The row of `rule`.
    init<Key, Value>(_ rule: MapRule<Key, Value>) {
        filing = rule.filing
        fileEntry = { rule.file($0, adding: $1, in: &$2) }
        filesAlikeEntries = { rule.filesAlike($0, $1) }
        refileEntry = { rule.refile($0, in: &$1) }
        convertGathered = { rule.converted($0, decoder: &$1) }
        installGathered = { rule.install($0, rows: $1, in: &$2) }
        joinGathered = { rule.join(&$0, $1, offset: $2) }
        describe = { rule.contents(of: $0) }
    }

    /// The row of a rule filing entries in `map` as `filing` says, counted in `tally`.
    static func rule<Key, Value>(
        _ map: any WritableKeyPath<IndexMaps, LayeredMap<Key, Filed<Value>>> & Sendable, _ filing: MapFiling,
        tally: MapRule<Key, Value>.Tally? = nil
    ) -> IndexMapRule {
        IndexMapRule(MapRule(map, filing, tally: tally))
    }

    /// Files `stored` in the map of `maps` (or takes it out, unless `adding`), if it is filed there.
    func file(_ stored: StoredEntry, adding: Bool, in maps: inout IndexMaps) { fileEntry(stored, adding, &maps) }

    /// Whether `old` and `new` are filed under the same key here (or both nowhere).
    func filesAlike(_ old: CacheEntry, _ new: CacheEntry) -> Bool { filesAlikeEntries(old, new) }

    /// Puts `stored` in place of the entry with its id, filed under the same key, where the map
    /// holds entries rather than ids.
    func refile(_ stored: StoredEntry, in maps: inout IndexMaps) { refileEntry(stored, &maps) }

    /// A decoding thread's gathering of rows under interned slots, under the map's keys, made
    /// from `decoder`'s interned text once per distinct key.
    func converted(_ gathered: Grouping<SlotKey>, decoder: inout EntryDecoder) -> any JoinableGrouping {
        convertGathered(gathered, &decoder)
    }

    /// Appends the rows of `other`, gathered by the thread that decoded the records after those of
    /// `gathered` (what ``converted(_:decoder:)`` made of each), moved `offset` rows on.
    func join(_ gathered: inout any JoinableGrouping, _ other: any JoinableGrouping, offset: Int) {
        joinGathered(&gathered, other, offset)
    }

    /// Makes the map of `maps` from `gathered` (what ``converted(_:decoder:)`` made, joined),
    /// filing rows of `table`.
    func install(_ gathered: any JoinableGrouping, rows table: EntryTable, in maps: inout IndexMaps) {
        installGathered(gathered, table, &maps)
    }

    /// The map's contents in `maps` as text, by map name: every key and what it files in filing
    /// order (see ``Index/filingContents()``).
    func contents(of maps: IndexMaps) -> [String: [String: [String]]] { describe(maps) }
}
