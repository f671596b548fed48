public import Foundation

/// Where the package is, for the files tests read from it (fixtures, Python helpers, scripts).
public enum PackageRoot {
    /// The folder holding `Package.swift`, found by walking up from this file, so that moving a
    /// test file between folders does not change what the tests find.
    public static let url: URL = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            url.deleteLastPathComponent()
        }
        return url
    }()
}
