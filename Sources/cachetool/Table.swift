/// A plain-text table: a header line and left-aligned columns two spaces apart, as `ps` and
/// `kubectl get` print them. Cells never wrap; an empty cell shows as `-`.
struct Table {
    var headers: [String]
    var rows: [[String]] = []

    init(_ headers: [String]) { self.headers = headers }

    mutating func append(_ row: [String]) { rows.append(row.map { $0.isEmpty ? "-" : $0 }) }

    /// The table as text, one line per row, each ending in a newline.
    func render() -> String {
        var widths = headers.map(\.count)
        for row in rows {
            for (column, cell) in row.enumerated() where column < widths.count {
                widths[column] = max(widths[column], cell.count)
            }
        }
        var text = ""
        for row in [headers] + rows {
            var line = ""
            for (column, cell) in row.enumerated() {
                if column == row.count - 1 {
                    line += cell
                } else {
                    line += cell + String(repeating: " ", count: widths[column] - cell.count + 2)
                }
            }
            text += line + "\n"
        }
        return text
    }
}
