import Foundation
import Logging
import Testing

@testable import SecureTokenCache

extension KeyringTests {
    /// Processes that open one keyring group from different data folders take different locks:
    /// the store notices an item written from another coordination folder and says so, in its
    /// description and in the log, instead of splitting silently.
    @Suite struct SplitFolder {
        typealias Support = KeyringTestSupport

        @Test func aWriterFromAnotherFolderIsReported() throws {
            let group = Support.uniqueGroup("split")
            let here = TemporaryDirectory()
            let elsewhere = TemporaryDirectory()
            let first = try KeyringStore(group: group, root: here.path)
            _ = try first.load()
            _ = try first.transact(since: .start) { _ in [.put(Support.record("at-1", "secret-one"))] }
            // Same folder: no warning, even through a second store.
            let log = CapturedLog()
            let sameFolder = try KeyringStore(group: group, root: here.path, logger: log.logger)
            #expect(sameFolder.storeDescription.warnings.isEmpty)
            #expect(log.messages.isEmpty)

            let other = try KeyringStore(group: group, root: elsewhere.path, logger: log.logger)
            let warnings = other.storeDescription.warnings
            #expect(warnings.count == 1)
            #expect(warnings.first?.contains("another folder") == true)
            let logged = log.messages
            #expect(logged.count == 1 && logged.first?.level == .warning)
            #expect(logged.allSatisfy { !$0.text.contains("secret-one") && !$0.text.contains(elsewhere.path) })
            #expect(other.storeDescription.coordinationDirectory == elsewhere.path + "/.\(group).keyring")

            // Once this side writes, the first side's next read of the item reports it too (its
            // counter never moves: without a read of the item it would not even see the write).
            _ = try other.transact(since: try other.load().1) { _ in [.put(Support.record("at-2", "secret-two"))] }
            #expect(first.storeDescription.warnings.isEmpty)
            _ = try first.load()
            #expect(first.storeDescription.warnings.count == 1)
        }
    }
}
