/// A decoding thread's part of a bulk filing (``BulkFiling``), gathered by interned slots.
///
/// Making an entry's index keys (a bucket of six ``HashedString``s, say) and hashing them per
/// entry would cost most of what decoding a record for filing costs. Entries of one user repeat
/// the same few keys, so the thread groups rows by the slots of their members (``SlotKey``) and
/// makes each index key once per distinct group when it finishes (``filing(_:)``), both as
/// ``IndexMaps/table`` says.
struct SlotFiling: Sendable {
    /// The rows, in order.
    private var rows: GatheredRows
    /// One gathering per row of ``IndexMaps/table``, in its order.
    private var maps: [Grouping<SlotKey>]
    /// ``IndexMaps/filings``, held so gathering an entry reads no global.
    private let filings = IndexMaps.filings

    /// Room for `capacity` entries, each map as much as its filing reserves.
    init(capacity: Int) {
        rows = GatheredRows(capacity: capacity)
        maps = filings.map { filing in
            func share(_ divisor: Int) -> Int { divisor == 0 ? 0 : capacity / divisor }
            return Grouping(rows: share(filing.reserve.rows), keys: share(filing.reserve.keys))
        }
    }

    /// Gathers `row`, an entry of `kind` whose members `decoder` interned at `slots`.
    mutating func add(_ row: consuming EntryTable.Row, kind: CredentialKind, slots: FilingSlots, decoder: borrowing EntryDecoder)
    {
        let position = rows.add(row)
        for number in filings.indices {
            if let key = filings[number].slotKey(kind: kind, slots: slots, decoder: decoder) {
                maps[number].add(position, to: key)
            }
        }
    }

    /// Gathers a typed entry, interning its members with `decoder`.
    mutating func add(_ stored: StoredEntry, decoder: inout EntryDecoder) {
        let slots = decoder.filingSlots(members: stored.entry.fields)
        add(
            EntryTable.Row(id: stored.id, ordinal: stored.ordinal, source: .entry(stored.entry)), kind: stored.id.kind,
            slots: slots, decoder: decoder)
    }

    /// The filing, every group's index key made from `decoder`'s interned text.
    consuming func filing(_ decoder: inout EntryDecoder) -> BulkFiling {
        var converted: [any JoinableGrouping] = []
        converted.reserveCapacity(maps.count)
        for (rule, gathered) in zip(IndexMaps.table, maps) { converted.append(rule.converted(gathered, decoder: &decoder)) }
        return BulkFiling(rows: rows, maps: converted)
    }
}
