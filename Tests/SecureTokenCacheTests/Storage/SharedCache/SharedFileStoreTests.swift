import Foundation
import Glibc
import Testing

@testable import SecureTokenCache

/// The msal-file store in one process: a plaintext MSAL document other tools share, opened as a
/// group. (Against real msal-python and msal-extensions processes: `SharedCachePeerTests`.)
@Suite(.timeLimit(.minutes(2))) struct SharedFileStoreTests {
    let folder = TemporaryDirectory()
    var path: String { folder.path + "/tool/msal_token_cache.json" }

    func configuration(lockTimeout: Duration = .seconds(10)) -> CacheConfiguration {
        var configuration = CacheConfiguration(sharedCache: .file(path: path), lockTimeout: lockTimeout)
        configuration.directory = folder.path + "/data"
        return configuration
    }

    func open() throws -> CacheGroup { try CacheGroup.open("shared", configuration: configuration()) }

    func document() throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    @Test func aVectorIsReadAsItIsAndWrittenBackAsMsalPythonWouldWriteIt() throws {
        for name in Fixtures.vectorNames {
            let vector = try Fixtures.vector(name)
            try FileManager.default.createDirectory(atPath: folder.path + "/tool", withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: path, contents: Data(vector), attributes: [.posixPermissions: 0o600])
            let group = try open()
            #expect(try group.exportMSAL(includeSecrets: true) == vector, "\(name)")
            #expect(group.storeDescription.kind == .msalFile)
            #expect(group.storeDescription.protection == .plaintextFile)
            #expect(group.storeDescription.warnings.contains { $0.contains("plaintext") })
            // A transaction that changes one entry rewrites the document with every other
            // entry as it was.
            let removed = try group.purgeExpiredAccessTokens()
            let written = try document()
            if removed == 0 { #expect(written == vector, "\(name): a transaction with no change wrote") }
            let reread = try CacheGroup.open("shared", configuration: configuration())
            #expect(try reread.exportMSAL(includeSecrets: true) == group.exportMSAL(includeSecrets: true), "\(name)")
        }
    }

    @Test func aStoredTokenIsInTheDocumentAndAnotherGroupFindsItAtOnce() throws {
        let writer = try open()
        let reader = try open()
        let cache = try TokenCache(clientId: Fixtures.clientA, group: writer)
        let stored = try cache.store(Fixtures.response(), for: Fixtures.request())
        let readerCache = try TokenCache(clientId: Fixtures.clientA, group: reader)
        let account = try #require(try readerCache.accounts().first)
        let found = try readerCache.accessToken(for: ["User.Read"], account: account)
        #expect(found?.token.secret == stored.secret)
        // The document is what msal-python writes for these entries, plus the extras section.
        let parsed = try MSALDocument.parse(try document())
        #expect(parsed.sections.map(\.name).contains(SharedCacheStore.extrasSection))
        #expect(parsed.entryCount == 5)
        let info = try #require(try SystemCall.lstat(path, "test"))
        #expect(info.st_mode & 0o777 == 0o600)
    }

    /// A process that reads many writes of another before writing again: its write keeps every
    /// one of them, whether the reads' changes were filed into its index or the index was built
    /// again (past ``SharedCacheStore/unfiledReadLimit`` reads).
    @Test(arguments: [3, SharedCacheStore.unfiledReadLimit + 6])
    func aWriteAfterManyReadsOfAnotherWriterKeepsEveryOneOfItsWrites(writes: Int) throws {
        let ours = try TokenCache(clientId: Fixtures.clientA, group: try open())
        let theirs = try TokenCache(clientId: Fixtures.clientA, group: try open())
        let request = { (scope: String) in try Fixtures.request(scopes: Scopes([scope])) }
        try ours.store(Fixtures.response(accessToken: "ours-0", scope: "Scope.0"), for: request("Scope.0"))
        for write in 1...writes {
            try theirs.store(
                Fixtures.response(accessToken: "theirs-\(write)", scope: "Scope.\(write)"), for: request("Scope.\(write)"))
            let account = try #require(try ours.accounts().first)
            #expect(try ours.accessToken(for: ["Scope.\(write)"], account: account)?.token.secret == "theirs-\(write)")
        }
        try ours.store(Fixtures.response(accessToken: "ours-last", scope: "Scope.last"), for: request("Scope.last"))
        let fresh = try TokenCache(clientId: Fixtures.clientA, group: try open())
        let account = try #require(try fresh.accounts().first)
        for scope in ["Scope.0", "Scope.last"] + (1...writes).map({ "Scope.\($0)" }) {
            #expect(try fresh.accessToken(for: Scopes([scope]), account: account) != nil, "\(scope) was lost")
        }
    }

    @Test func unknownSectionsAndFieldsOfOtherToolsSurviveOurWrites() throws {
        let foreign =
            #"{"AccessToken": {}, "Account": {}, "IdToken": {}, "RefreshToken": {}, "AppMetadata": {}, "NodeOnly": {"x": [1, 2]}}"#
        try FileManager.default.createDirectory(atPath: folder.path + "/tool", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: path, contents: Data(foreign.utf8))
        let group = try open()
        try TokenCache(clientId: Fixtures.clientA, group: group).store(Fixtures.response(), for: Fixtures.request())
        let parsed = try MSALDocument.parse(try document())
        let node = parsed.sections.first { $0.name == "NodeOnly" }
        guard case .unknown(let value)? = node?.content else {
            Issue.record("the unknown section was lost")
            return
        }
        #expect(value == .object(["x": .array([.number("1"), .number("2")])]))
    }

    /// A relative document or lock file would be watched and locked under another name by each
    /// process (and had the store trap): it is refused before anything is looked at or made.
    @Test func aRelativePathIsATypedErrorAndMakesNothing() throws {
        for cache in [
            MSALSharedCache.file(path: "msal_token_cache.json"), .file(path: path, lockFile: "cache.lockfile"),
            .keyring(
                MSALSharedCache.KeyringItem(
                    schema: "s", attributes: ["a": "b"], label: "l", collection: "default", signalFile: "signal")),
        ] {
            var relative = configuration()
            relative.sharedCache = cache
            relative.store = cache.kind
            let error = #expect(throws: TokenCacheError.self) { try CacheGroup.open("shared", configuration: relative) }
            #expect(error?.code == .invalidArgument, "\(String(describing: error))")
            #expect(error?.message.contains("not an absolute path") == true, "\(String(describing: error))")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/data"))
    }

    @Test func aDamagedDocumentIsATypedErrorAndIsNeverWrittenOver() throws {
        try FileManager.default.createDirectory(atPath: folder.path + "/tool", withIntermediateDirectories: true)
        for damaged in [#"{"AccessToken": {"#, "[1, 2]", #"{"AccessToken": []}"#, "not json"] {
            FileManager.default.createFile(atPath: path, contents: Data(damaged.utf8), attributes: [.posixPermissions: 0o600])
            #expect(throws: TokenCacheError.self) { try open() }
            do {
                _ = try open()
            } catch let error as TokenCacheError {
                #expect(error.code == .malformedCache)
                #expect(error.message.contains(path))
            }
            #expect(try document() == Array(damaged.utf8), "the damaged document was changed")
        }
    }

    /// msal-extensions with portalocker may write without the lock file (it takes its lock on a
    /// file the last holder removed): our write that reads its truncated document under our lock
    /// waits for its bytes instead of taking an empty cache, which would remove every entry.
    @Test func anEmptyDocumentReadUnderTheLockIsWaitedForNotBelieved() async throws {
        try FileManager.default.createDirectory(atPath: folder.path + "/tool", withIntermediateDirectories: true)
        let tool = try toolCache()
        try tool.store(Fixtures.response(accessToken: "the tool's"), for: Fixtures.request())
        let toolDocument = try tool.group.exportMSAL(includeSecrets: true)
        try writeInPlace(toolDocument)
        let ours = try TokenCache(clientId: Fixtures.clientA, group: try open())
        // The tool holds the lock file (a live pid) while our write starts, and waits for it.
        let lockFile = path + ".lockfile"
        FileManager.default.createFile(atPath: lockFile, contents: Data("\(getppid()) python".utf8))
        let writing = Task.detached {
            try ours.store(
                Fixtures.response(accessToken: "ours", scope: "Files.Read"), for: Fixtures.request(scopes: ["Files.Read"]))
        }
        try await Task.sleep(for: .milliseconds(20))
        // Another writer truncates the document, the lock file goes, and its bytes come later.
        try writeInPlace([])
        unlink(lockFile)
        try await Task.sleep(for: .milliseconds(60))
        try writeInPlace(toolDocument)
        try await writing.value
        let after = try TokenCache(clientId: Fixtures.clientA, group: try open())
        let account = try #require(try after.accounts().first)
        #expect(try after.accessToken(for: ["User.Read"], account: account)?.token.secret == "the tool's")
        #expect(try after.accessToken(for: ["Files.Read"], account: account)?.token.secret == "ours")
    }

    /// The document's file as a file system whose times are coarse shows it: a rewrite of the
    /// same size in place, within one tick, leaves its version as it was.
    struct CoarseTimesMedium: SharedDocumentMedium {
        let file: SharedFileMedium
        var location: String { file.location }
        var exposure: String { file.exposure }
        var watchedFile: String { file.watchedFile }

        static func coarse(_ version: DocumentVersion?) -> DocumentVersion? {
            version.map {
                var coarse = $0
                coarse.modified = timespec()
                coarse.changed = timespec()
                return coarse
            }
        }

        func version() throws -> DocumentVersion? { Self.coarse(try file.version()) }
        func read() throws -> (bytes: [UInt8], version: DocumentVersion?) {
            let (bytes, version) = try file.read()
            return (bytes, Self.coarse(version))
        }
        func write(_ bytes: [UInt8]) throws -> DocumentVersion { Self.coarse(try file.write(bytes))! }
        func exists() throws -> Bool { try file.exists() }
        func removeLeftovers() { file.removeLeftovers() }
    }

    /// Another tool's rewrite that leaves the version as it was (same size, same tick) is read
    /// before our write, which would otherwise write the document as it last read it over it.
    @Test func aRewriteThatLeavesTheVersionAsItWasIsNotWrittenOver() throws {
        try FileManager.default.createDirectory(atPath: folder.path + "/tool", withIntermediateDirectories: true)
        let tool = try toolCache()
        try tool.store(Fixtures.response(accessToken: "rotated-1"), for: Fixtures.request())
        try writeInPlace(try tool.group.exportMSAL(includeSecrets: true))
        let lockFile = path + ".lockfile"
        let store = try SharedCacheStore(
            name: "shared", kind: .msalFile, medium: CoarseTimesMedium(file: SharedFileMedium(path: path)), lockFile: lockFile,
            coordination: GroupDirectory.shared(root: folder.path + "/data", name: "shared", lockFile: lockFile),
            protection: .plaintextFile, lockTimeout: .seconds(10), logger: .discarding)
        let ours = try TokenCache(clientId: Fixtures.clientA, group: CacheGroup(name: "shared", store: store))
        let account = try #require(try ours.accounts().first)
        #expect(try ours.accessToken(for: ["User.Read"], account: account)?.token.secret == "rotated-1")

        // The tool rotates its token for one of the same length, in place, and our write follows.
        try tool.store(Fixtures.response(accessToken: "rotated-2"), for: Fixtures.request())
        let coarse = CoarseTimesMedium(file: SharedFileMedium(path: path))
        let before = try #require(try coarse.version())
        try writeInPlace(try tool.group.exportMSAL(includeSecrets: true))
        try #require(try coarse.version() == before, "the version moved")
        try ours.store(Fixtures.response(accessToken: "ours", scope: "Files.Read"), for: Fixtures.request(scopes: ["Files.Read"]))
        let fresh = try TokenCache(clientId: Fixtures.clientA, group: try open())
        let freshAccount = try #require(try fresh.accounts().first)
        #expect(try fresh.accessToken(for: ["User.Read"], account: freshAccount)?.token.secret == "rotated-2")
        #expect(try fresh.accessToken(for: ["Files.Read"], account: freshAccount)?.token.secret == "ours")
    }

    @Test func aLockHeldByAnotherLiveProcessTimesOutNamingItAndLookupsGoOn() throws {
        let group = try CacheGroup.open("shared", configuration: configuration(lockTimeout: .milliseconds(300)))
        let cache = try TokenCache(clientId: Fixtures.clientA, group: group)
        try cache.store(Fixtures.response(), for: Fixtures.request())
        // A lock file recording a live pid (this process's parent) without our flock.
        let lockFile = path + ".lockfile"
        let parent = getppid()
        FileManager.default.createFile(atPath: lockFile, contents: Data("\(parent) python".utf8))
        defer { unlink(lockFile) }
        do {
            try cache.store(Fixtures.response(accessToken: "second"), for: Fixtures.request())
            Issue.record("the write did not wait for the lock")
        } catch let error as TokenCacheError {
            #expect(error.code == .lockTimeout)
            #expect(error.message.contains("process \(parent)"))
        }
        let account = try #require(try cache.accounts().first)
        #expect(try cache.accessToken(for: ["User.Read"], account: account)?.token.secret == "at-secret")
    }

    @Test func aLockFileLeftByADeadProcessIsTakenOver() throws {
        let group = try open()
        let lockFile = path + ".lockfile"
        // A pid that cannot be alive (above pid_max), written a second ago.
        FileManager.default.createFile(atPath: lockFile, contents: Data("99999999 crashed".utf8))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -1)], ofItemAtPath: lockFile)
        try TokenCache(clientId: Fixtures.clientA, group: group).store(Fixtures.response(), for: Fixtures.request())
        #expect(!FileManager.default.fileExists(atPath: lockFile), "the lock file stays after the write")
    }

    @Test func aLockFileThatIsASymlinkIsRefused() throws {
        let group = try open()
        try FileManager.default.createSymbolicLink(atPath: path + ".lockfile", withDestinationPath: folder.path + "/elsewhere")
        do {
            try TokenCache(clientId: Fixtures.clientA, group: group).store(Fixtures.response(), for: Fixtures.request())
            Issue.record("a symlinked lock file was used")
        } catch let error as TokenCacheError {
            #expect(error.code == .insecurePermissions)
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/elsewhere"))
    }

    /// A lock file that no tool makes: a folder, a FIFO, a file of another user.
    enum ForeignLockFile: String, CaseIterable, Sendable {
        case directory, fifo, otherUsersFile

        /// Makes it at `path`.
        func make(at path: String) throws {
            switch self {
            case .directory:
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            case .fifo:
                try #require(mkfifo(path, 0o600) == 0, "mkfifo: \(errno)")
            case .otherUsersFile:
                // A pid that cannot be alive: were the file ours, it would be taken over.
                FileManager.default.createFile(atPath: path, contents: Data("99999999 other".utf8))
                try #require(chown(path, 65534, 65534) == 0, "chown: \(errno)")
            }
        }

        /// Whether this process can make it: only root can give a file to another user.
        var canBeMade: Bool { self != .otherUsersFile || geteuid() == 0 }
    }

    @Test(arguments: ForeignLockFile.allCases.filter(\.canBeMade))
    func aLockFileThatIsNotAToolsFileIsATypedErrorAndTheDocumentStaysAsItWas(lockFile: ForeignLockFile) throws {
        let vector = try Fixtures.vector("v2_two_accounts_two_tenants")
        try FileManager.default.createDirectory(atPath: folder.path + "/tool", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: path, contents: Data(vector), attributes: [.posixPermissions: 0o600])
        let group = try open()
        try lockFile.make(at: path + ".lockfile")
        let before = try #require(try SystemCall.lstat(path + ".lockfile", "test"))
        do {
            try TokenCache(clientId: Fixtures.clientA, group: group).store(Fixtures.response(), for: Fixtures.request())
            Issue.record("a write went ahead with a \(lockFile) as the lock file")
        } catch let error as TokenCacheError {
            #expect(error.code == .insecurePermissions)
            #expect(error.message.contains(path + ".lockfile"), "\(error.message)")
            #expect(error.message.contains("nothing was written: remove it"), "\(error.message)")
        }
        #expect(try document() == vector, "the document was changed")
        let after = try #require(try SystemCall.lstat(path + ".lockfile", "test"))
        #expect(after.st_mode == before.st_mode && after.st_ino == before.st_ino, "the lock file was replaced")
        #expect(try group.exportMSAL(includeSecrets: true) == vector)
    }

    /// Writes `bytes` over the document in place, as msal-extensions does (truncate, write).
    func writeInPlace(_ bytes: [UInt8]) throws {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(fd >= 0, "open: \(errno)")
        defer { close(fd) }
        try #require(bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == bytes.count)
    }

    /// Another tool's cache: the document it writes is its group's export.
    func toolCache() throws -> TokenCache { try TokenCache(clientId: Fixtures.clientA, group: CacheGroup(inMemory: "tool")) }

    /// A tool that removes the cache's folder and makes it again leaves the watcher nothing to
    /// watch: no event ever announces the new document, and the lookup that misses it finds it.
    @Test func aDocumentNoWatcherCanSeeIsFoundByTheLookupThatMissesIt() throws {
        try FileManager.default.createDirectory(atPath: folder.path + "/tool", withIntermediateDirectories: true)
        let tool = try toolCache()
        try tool.store(Fixtures.response(accessToken: "before"), for: Fixtures.request())
        try writeInPlace(try tool.group.exportMSAL(includeSecrets: true))
        let group = try open()
        let ours = try TokenCache(clientId: Fixtures.clientA, group: group)
        #expect(try ours.accounts().count == 1)

        let generation = group.generation
        try FileManager.default.removeItem(atPath: folder.path + "/tool")
        // The watcher announces the removal, then its watch is gone with the folder.
        let deadline = ContinuousClock.now + .seconds(10)
        while group.generation == generation, ContinuousClock.now < deadline { SystemCall.sleep(for: .milliseconds(1)) }
        try #require(group.generation != generation, "the watcher did not announce the removal")
        #expect(try ours.accounts().isEmpty)

        try FileManager.default.createDirectory(atPath: folder.path + "/tool", withIntermediateDirectories: true)
        try tool.store(
            Fixtures.response(accessToken: "after", scope: "Files.Read"), for: Fixtures.request(scopes: ["Files.Read"]))
        try writeInPlace(try tool.group.exportMSAL(includeSecrets: true))
        let account = try #require(try ours.account(username: "Alice@Contoso.com"))
        #expect(try ours.accessToken(for: ["Files.Read"], account: account)?.token.secret == "after")
    }

    @Test func aDocumentOtherUsersCanReadIsReportedAndMadePrivateByTheNextWrite() throws {
        try FileManager.default.createDirectory(atPath: folder.path + "/tool", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: path, contents: Data("{}".utf8), attributes: [.posixPermissions: 0o644])
        let group = try open()
        #expect(group.storeDescription.warnings.contains { $0.contains("mode 644") && $0.contains("chmod 600") })
        try TokenCache(clientId: Fixtures.clientA, group: group).store(Fixtures.response(), for: Fixtures.request())
        #expect(try #require(try SystemCall.lstat(path, "test")).st_mode & 0o777 == 0o600)
    }

    /// A tool's document that a sign-out or a move emptied still lists its sections, and holds
    /// nothing to merge with: a group moves into it, and back.
    @Test func aGroupMovesIntoADocumentThatWasEmptiedAndBack() throws {
        let vector = try Fixtures.vector("v2_two_accounts_two_tenants")
        let emptied = #"{"AccessToken": {}, "Account": {}, "IdToken": {}, "RefreshToken": {}, "AppMetadata": {}}"#
        let other = folder.path + "/other/msal.cache.nocae"
        for (file, contents) in [(path, vector), (other, Array(emptied.utf8))] {
            try FileManager.default.createDirectory(
                atPath: SystemCall.parentDirectory(of: file), withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: file, contents: Data(contents), attributes: [.posixPermissions: 0o600])
        }
        var there = configuration()
        there.sharedCache = .file(path: other)
        #expect(try CacheGroup.move("shared", from: configuration(), to: there) > 0)
        #expect(try CacheGroup.open("shared", configuration: there).exportMSAL(includeSecrets: true) == vector)
        #expect(try CacheGroup.open("shared", configuration: configuration()).statistics().countByKind.isEmpty)

        #expect(try CacheGroup.move("shared", from: there, to: configuration()) > 0)
        #expect(try document() == vector)
    }

    @Test func openExistingCreatesNothingWhenThereIsNoDocument() throws {
        #expect(throws: TokenCacheError.self) { try CacheGroup.openExisting("shared", configuration: configuration()) }
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/tool"))
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/data"))
    }
}
