import Foundation
import Testing

@testable import SecureTokenCache

/// The group folder, the group lock and the KeyringStore's shared generation counter (no keyring
/// needed).
@Suite(.timeLimit(.minutes(1))) struct KeyringCoordinationTests {
    /// Removed with the suite's instance, whatever a test left in it.
    private let folder = TemporaryDirectory()
    var root: String { folder.path }

    @Test func theKeyringGroupFolderIsPrivateAndBesideTheFileGroups() throws {
        let directory = try GroupDirectory.keyring(root: root, name: "com.example.group")
        try directory.createIfNeeded()
        #expect(directory.path == root + "/.com.example.group.keyring")
        let mode = try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? Int
        #expect(mode == 0o700)
        chmod(directory.path, 0o775)
        let error = #expect(throws: TokenCacheError.self) { try directory.createIfNeeded() }
        #expect(error?.code == .insecurePermissions)
    }

    @Test func aRelativeRootIsMadeAbsolute() throws {
        let directory = try GroupDirectory(root: "some/folder/", name: "g")
        let cwd = FileManager.default.currentDirectoryPath
        #expect(directory.root == (cwd == "/" ? "" : cwd) + "/some/folder")
        #expect(directory.path == directory.root + "/g")
        #expect(try GroupDirectory(root: ".", name: "g").root == cwd)
    }

    @Test(arguments: ["", ".hidden", "../escape", "a/b", "tenant id", String(repeating: "g", count: 201)])
    func badGroupNamesAreRejected(_ name: String) {
        let error = #expect(throws: TokenCacheError.self) { try GroupDirectory.keyring(root: root, name: name) }
        #expect(error?.code == .invalidArgument)
        let fileError = #expect(throws: TokenCacheError.self) { try GroupDirectory(root: root, name: name) }
        #expect(fileError?.code == .invalidArgument)
    }

    @Test func aHeldLockTimesOutNamingTheHolder() throws {
        let lock = FileLock(path: root + "/lock", purpose: "the group locking")
        try lock.withLock(timeout: .seconds(1)) {
            let error = #expect(throws: TokenCacheError.self) { try lock.withLock(timeout: .milliseconds(200)) {} }
            #expect(error?.code == .lockTimeout)
            #expect(error?.message.contains("pid \(getpid())") == true)
            #expect(error?.message.contains("the group locking") == true)
            #expect(try lock.withLockIfFree { 1 } == nil)
            let holder = try #require(lock.holder())
            #expect(holder.pid == getpid() && holder.held)
        }
        // Released: the waiter gets it now, and the file stays (it is never unlinked).
        #expect(try lock.withLock(timeout: .milliseconds(200)) { 42 } == 42)
        #expect(try lock.withLockIfFree { 43 } == 43)
        #expect(lock.holder()?.held == false)
    }

    @Test func aLockFileThatIsNotPrivateIsRefused() throws {
        let path = root + "/lock"
        #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o644]))
        let error = #expect(throws: TokenCacheError.self) {
            try FileLock(path: path, purpose: "the group").withLock(timeout: .milliseconds(100)) {}
        }
        #expect(error?.code == .insecurePermissions)
    }

    @Test func theGenerationIsSharedBetweenMappingsAndMadeOnce() throws {
        let directory = try GroupDirectory.keyring(root: root, name: "counting")
        try directory.createIfNeeded()
        let first = try SharedState(directory: directory, creating: true)
        let second = try SharedState(directory: directory, creating: true)
        #expect(first.loadGeneration() == 0)
        first.storeGeneration(41)
        #expect(second.loadGeneration() == 41)
        #expect(second.bumpGeneration() == 42)
        #expect(first.loadGeneration() == 42)
        // Creating again finds the file: it is never made twice or reset.
        #expect(try SharedState(directory: directory, creating: true).loadGeneration() == 42)
        let mode = try FileManager.default.attributesOfItem(atPath: directory.file("state"))[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func aStateFileOfAnotherSizeIsRefusedBeforeItIsMapped() throws {
        let directory = try GroupDirectory.keyring(root: root, name: "short")
        try directory.createIfNeeded()
        #expect(
            FileManager.default.createFile(
                atPath: directory.file("state"), contents: Data("STCSTATE".utf8), attributes: [.posixPermissions: 0o600]))
        let error = #expect(throws: TokenCacheError.self) { try SharedState(directory: directory, creating: true) }
        #expect(error?.code == .storeCorrupted)
    }
}
