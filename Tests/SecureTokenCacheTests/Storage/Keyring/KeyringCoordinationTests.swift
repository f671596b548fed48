import Foundation
import Testing

@testable import SecureTokenCache

/// The KeyringStore's runtime folder, group lock and shared generation counter (no keyring needed).
@Suite(.timeLimit(.minutes(1))) struct KeyringCoordinationTests {
    /// Removed with the suite's instance, whatever a test left in it.
    private let folder = TemporaryDirectory()
    var runtime: String { folder.path }

    @Test func theGroupFolderIsPrivate() throws {
        let directory = try KeyringGroupDirectory(group: "com.example.group", runtimeDirectory: runtime)
        #expect(directory.path == runtime + "/secure-token-cache/com.example.group")
        let mode = try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? Int
        #expect(mode == 0o700)
        chmod(directory.path, 0o755)
        let error = #expect(throws: TokenCacheError.self) {
            try KeyringGroupDirectory(group: "com.example.group", runtimeDirectory: runtime)
        }
        #expect(error?.code == .insecurePermissions)
    }

    @Test(arguments: ["", ".hidden", "../escape", "a/b", "tenant id", String(repeating: "g", count: 201)])
    func badGroupNamesAreRejected(_ name: String) {
        let error = #expect(throws: TokenCacheError.self) { try KeyringGroupDirectory(group: name, runtimeDirectory: runtime) }
        #expect(error?.code == .invalidArgument)
    }

    @Test func aHeldLockTimesOutNamingTheHolder() throws {
        let directory = try KeyringGroupDirectory(group: "locking", runtimeDirectory: runtime)
        let holder = KeyringGroupLock(directory: directory, timeout: .seconds(1))
        let waiter = KeyringGroupLock(directory: directory, timeout: .milliseconds(200))
        try holder.withLock {
            let error = #expect(throws: TokenCacheError.self) { try waiter.withLock {} }
            #expect(error?.code == .lockTimeout)
            #expect(error?.message.contains("pid \(getpid())") == true)
        }
        // Released: the waiter gets it now.
        #expect(try waiter.withLock { 42 } == 42)
    }

    @Test func theCounterIsSharedBetweenMappings() throws {
        let directory = try KeyringGroupDirectory(group: "counting", runtimeDirectory: runtime)
        let first = try KeyringGenerationCounter(directory: directory)
        let second = try KeyringGenerationCounter(directory: directory)
        #expect(first.load() == 0)
        first.store(41)
        #expect(second.load() == 41)
        second.store(42)
        #expect(first.load() == 42)
    }
}
